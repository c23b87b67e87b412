// Command-line options and usage errors of dry-run.
import { describe, expect, it } from 'vitest';
import { dryRun, dryRunJson, SECRETS, SHOP } from './run.js';

describe('--endpoint', () => {
  it('plans only the named endpoints, in file order, each once', async () => {
    const { run, doc } = await dryRunJson([SHOP, '--endpoint', 'proxy', '--endpoint', 'signup', '--endpoint', 'proxy']);
    expect(run.exitCode).toBe(0);
    expect(doc.endpoints.map((e) => e.name)).toEqual(['signup', 'proxy']);
  });

  it('is a usage error with a did-you-mean for an unknown name', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'sigup']);
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('there is no endpoint "sigup"');
    expect(run.stderr).toContain('Did you mean "signup"?');
  });

  it('lists the endpoints there are when no name is close', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'completely-different']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).not.toContain('Did you mean');
    expect(run.stderr).toMatch(/there is no endpoint "completely-different" in \S+\. Its endpoints: "signup", "download", "forwarder", .*"proxy"/);
  });
});

describe('--param', () => {
  it('warns about a parameter the endpoint does not declare, with a close declared name', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'signup', '--param', 'email=a@example.com', '--param', 'nmae=Ann']);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toMatch(/warning: parameter "nmae" is not declared by endpoint "signup" and is ignored[^\n]*Did you mean "name"\?/);
    expect(run.stdout).toContain('Subject: Welcome, friend');
  });

  it('names every endpoint that ignores it in one warning', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'go', '--endpoint', 'proxy', '--param', 'target=https://good.example/', '--param', 'zzz=1']);
    expect(run.stderr).toContain('parameter "zzz" is not declared by endpoints "go", "proxy"');
    expect(run.stderr).toContain('parameter "target" is not declared by endpoint "proxy"');
  });

  it('does not warn about reserved parameters', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'proxy', '--param', 'environment=live', '--param', 'debug=1', '--param', 'hash=abc'], { ...SECRETS });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toBe('');
  });

  it('is a usage error without a name=value', async () => {
    const run = await dryRun([SHOP, '--param', 'email']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('name=value');
    expect(run.stdout).toBe('');
  });

  it('keeps everything after the first = as the value', async () => {
    const { doc } = await dryRunJson([SHOP, '--endpoint', 'signup', '--param', 'email=ann@example.com', '--param', 'name=a=b']);
    expect(doc.endpoints[0]!.tasks.find((t) => t.id === 'notify')!.emails![0]!.subject).toBe('Welcome, a=b');
  });

  it('forwards the bound parameters to the target endpoint', async () => {
    const { run, doc } = await dryRunJson([SHOP, '--endpoint', 'forwarder', '--param', 'file=terms.txt']);
    // forwarder does not declare "file", so, as in serve, it is not passed on
    expect(run.exitCode).toBe(1);
    expect(doc.endpoints[0]!.response.status).toBe(400);
  });

  it('forwards input-parameter values expanded over the endpoint scope', async () => {
    const { run, doc } = await dryRunJson([SHOP, '--endpoint', 'terms', '--param', 'environment=preview']);
    expect(run.exitCode).toBe(0);
    expect(doc.endpoints[0]!.response).toEqual({ kind: 'forward', status: 200 });
    const text = await dryRun([SHOP, '--endpoint', 'terms', '--param', 'environment=preview'], { ...SECRETS });
    expect(text.stdout).toContain('→ download: static/terms.txt (text/plain; charset=utf-8), download as ${file} → download as terms-preview.txt');
  });
});

describe('--format and usage', () => {
  it('refuses an unknown format with exit 2', async () => {
    const run = await dryRun([SHOP, '--format', 'yaml']);
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
  });

  it('needs a file', async () => {
    const run = await dryRun([]);
    expect(run.exitCode).toBe(2);
  });

  it('documents its options in --help', async () => {
    const run = await dryRun(['--help']);
    expect(run.exitCode).toBe(0);
    for (const option of ['--endpoint', '--param', '--format']) expect(run.stdout).toContain(option);
  });

  it('prints no color codes when stdout is not a terminal, and none with NO_COLOR', async () => {
    for (const env of [{}, { NO_COLOR: '1', FORCE_COLOR: '1' }] as Record<string, string>[]) {
      const run = await dryRun([SHOP, '--param', 'email=a@example.com'], env);
      expect(run.stdout).not.toContain('\u001b[');
      expect(run.stderr).not.toContain('\u001b[');
    }
  });
});
