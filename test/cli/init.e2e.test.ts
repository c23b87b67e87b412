// `endpoint-service init [dir]` through the built binary (cli.md, "init"): what it writes
// validates with no error, by validate and by the schemas it copies, serves, and the three
// commands it prints run as printed; a folder that holds anything is refused with exit 2 and
// left as it was.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { validateXML } from 'xmllint-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe } from '../helpers/serve.js';
import { assertBuilt, removeDir, repoRoot, run, STACK_TRACE, tempApp } from './helpers.js';

const scratch: string[] = [];
const freshDir = () => {
  const dir = tempApp({});
  scratch.push(dir);
  return dir;
};
afterAll(() => scratch.forEach(removeDir));

/** Every file below `dir`, relative, sorted. */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/** The printed "Next:" commands: leading NAME=value words set variables, then endpoint-service and its arguments. */
function nextCommands(stdout: string): { env: Record<string, string>; args: string[] }[] {
  const lines = stdout.slice(stdout.indexOf('\nNext:\n') + 7).trimEnd().split('\n');
  return lines.map((line) => {
    const words = line.trim().split(/\s+/);
    const env: Record<string, string> = {};
    while (/^[A-Z_]+=/.test(words[0]!)) {
      const [name, value] = words.shift()!.split('=') as [string, string];
      env[name] = value;
    }
    expect(words.shift()).toBe('endpoint-service');
    return { env, args: words };
  });
}

describe('init into a new folder', () => {
  let cwd: string;
  let stdout: string;

  beforeAll(async () => {
    assertBuilt();
    cwd = freshDir();
    const r = await run(['init', 'demo'], { cwd });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    stdout = r.stdout;
  });

  it('writes the application, its settings and the schemas for editors', () => {
    expect(tree(path.join(cwd, 'demo'))).toEqual([
      'email-sending-configuration.xml',
      'endpoints.xml',
      'schema/email-sending-configuration.xsd',
      'schema/endpoints.xsd',
      'schema/security.xsd',
    ]);
    const endpoints = readFileSync(path.join(cwd, 'demo/endpoints.xml'), 'utf8');
    expect(endpoints).toContain('xsi:noNamespaceSchemaLocation="schema/endpoints.xsd"');
    expect(endpoints).toMatch(/<parameter name="email" format="email"\/>/);
    expect(endpoints).toMatch(/<parameter name="message" default-value="" max-length="5000"\/>/);
    expect(endpoints).toContain('class="HttpRequest"');
    expect(endpoints).toContain('class="Email"');
    expect(readFileSync(path.join(cwd, 'demo/email-sending-configuration.xml'), 'utf8')).toContain('${env:SMTP_HOST}');
  });

  it('prints what the README shows', () => {
    const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    const shown = /\$ npx endpoint-service init demo\n([\s\S]*?)```/.exec(readme)![1]!;
    expect(stdout).toBe(shown);
  });

  it('prints the next three commands: validate, dry-run, serve', () => {
    expect(nextCommands(stdout).map((c) => c.args[0])).toEqual(['validate', 'dry-run', 'serve']);
    for (const c of nextCommands(stdout)) expect(c.args.at(-1)).toBe('demo/endpoints.xml');
  });

  it('validate, as printed: 0 errors (the one warning is the variable to set where it runs)', async () => {
    const [validate] = nextCommands(stdout);
    const r = await run(validate!.args, { cwd, env: validate!.env });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('0 errors, 1 warning');
    expect(r.stdout).toContain('env-not-set');
    const set = await run(validate!.args, { cwd, env: { SMTP_HOST: 'localhost' } });
    expect(set.stdout).toBe('0 errors, 0 warnings\n');
  });

  it('dry-run, as printed: the plan of a simulated request, exit 0', async () => {
    const [, dryRun] = nextCommands(stdout);
    const r = await run(dryRun!.args, { cwd, env: dryRun!.env });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('[runs] save-contact  HttpRequest');
    expect(r.stdout).toContain('Subject: Contact from Ann');
  });

  it('serve, as printed: it starts and answers (tasks refused any host here, so nothing leaves the machine)', async () => {
    const [, , serve] = nextCommands(stdout);
    expect(serve!.env).toEqual({ SMTP_HOST: 'localhost' });
    const file = path.join(cwd, serve!.args.at(-1)!);
    const service = await startServe(file, ['--allow-task-host', '127.0.0.1'], serve!.env);
    try {
      const ok = await fetch(`${service.url}/contact?name=Ann&email=ann@example.com`);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ received: true, request: ok.headers.get('x-request-id') });
      const missing = await fetch(`${service.url}/contact?name=Ann`);
      expect(missing.status).toBe(400);
      expect(await missing.text()).toContain('email');
    } finally {
      await service.stop();
    }
  });

  it('what it writes validates against the schemas it names', async () => {
    for (const [file, schema] of [
      ['endpoints.xml', 'schema/endpoints.xsd'],
      ['email-sending-configuration.xml', 'schema/email-sending-configuration.xsd'],
    ] as const) {
      const result = await validateXML({
        xml: [{ fileName: file, contents: readFileSync(path.join(cwd, 'demo', file), 'utf8') }],
        schema: [readFileSync(path.join(cwd, 'demo', schema), 'utf8')],
      });
      expect(result.errors.map((e) => e.rawMessage), file).toEqual([]);
    }
  });

  it('copies the schemas of the package unchanged', () => {
    for (const name of ['endpoints.xsd', 'email-sending-configuration.xsd', 'security.xsd']) {
      expect(readFileSync(path.join(cwd, 'demo/schema', name), 'utf8')).toBe(readFileSync(path.join(repoRoot, 'schema', name), 'utf8'));
    }
  });
});

describe('init elsewhere', () => {
  it('writes into the current folder without an argument, and prints paths from there', async () => {
    const cwd = freshDir();
    const r = await run(['init'], { cwd });
    expect(r.exitCode).toBe(0);
    expect(tree(cwd)).toContain('endpoints.xml');
    expect(nextCommands(r.stdout)[0]!.args).toEqual(['validate', 'endpoints.xml']);
    expect((await run(['validate', 'endpoints.xml'], { cwd, env: { SMTP_HOST: 'localhost' } })).stdout).toBe('0 errors, 0 warnings\n');
  });

  it('writes into an empty folder that exists, and into new nested folders', async () => {
    const cwd = freshDir();
    mkdirSync(path.join(cwd, 'empty'));
    expect((await run(['init', 'empty'], { cwd })).exitCode).toBe(0);
    expect((await run(['init', 'a/b/c'], { cwd })).exitCode).toBe(0);
    expect(tree(path.join(cwd, 'a/b/c'))).toContain('endpoints.xml');
  });

  it('quotes a path with a space in the commands it prints', async () => {
    const cwd = freshDir();
    const r = await run(['init', 'my app'], { cwd });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("endpoint-service validate 'my app/endpoints.xml'\n");
  });
});

describe('init refuses, writing nothing', () => {
  it('a folder with a file in it: exit 2, the folder as it was', async () => {
    const cwd = freshDir();
    mkdirSync(path.join(cwd, 'demo'));
    writeFileSync(path.join(cwd, 'demo/endpoints.xml'), '<endpoint-folder/>\n');
    writeFileSync(path.join(cwd, 'demo/notes.txt'), 'mine\n');
    const r = await run(['init', 'demo'], { cwd });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/demo is not empty \(it holds endpoints\.xml, notes\.txt\).*nothing was written/);
    expect(r.stderr).not.toMatch(STACK_TRACE);
    expect(tree(path.join(cwd, 'demo'))).toEqual(['endpoints.xml', 'notes.txt']);
    expect(readFileSync(path.join(cwd, 'demo/endpoints.xml'), 'utf8')).toBe('<endpoint-folder/>\n');
  });

  it('a folder holding only a subfolder or a hidden file', async () => {
    const cwd = freshDir();
    mkdirSync(path.join(cwd, 'a/static'), { recursive: true });
    writeFileSync(path.join(cwd, 'b'), '');
    mkdirSync(path.join(cwd, 'c'));
    writeFileSync(path.join(cwd, 'c/.env'), 'X=1\n');
    for (const dir of ['a', 'c']) expect((await run(['init', dir], { cwd })).exitCode, dir).toBe(2);
    expect(readdirSync(path.join(cwd, 'a'))).toEqual(['static']);
    expect(readdirSync(path.join(cwd, 'c'))).toEqual(['.env']);
  });

  it('a path that is a file: exit 2', async () => {
    const cwd = freshDir();
    writeFileSync(path.join(cwd, 'taken'), 'x');
    const r = await run(['init', 'taken'], { cwd });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('taken is a file, not a folder');
    expect(readFileSync(path.join(cwd, 'taken'), 'utf8')).toBe('x');
  });

  it('a folder that cannot be made (a file stands in its path): exit 2', async () => {
    const cwd = freshDir();
    writeFileSync(path.join(cwd, 'taken'), 'x');
    const r = await run(['init', 'taken/demo'], { cwd });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/cannot (read|write into) taken\/demo/);
    expect(readdirSync(cwd)).toEqual(['taken']);
  });

  it('two folders: a usage error, exit 2', async () => {
    const cwd = freshDir();
    const r = await run(['init', 'a', 'b'], { cwd });
    expect(r.exitCode).toBe(2);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it.runIf(process.platform === 'linux' && process.getuid?.() !== 0)('a folder it cannot write into: exit 2, nothing left behind', async () => {
    const cwd = freshDir();
    mkdirSync(path.join(cwd, 'locked'), { mode: 0o500 });
    const r = await run(['init', 'locked/demo'], { cwd });
    expect(r.exitCode).toBe(2);
    expect(readdirSync(path.join(cwd, 'locked'))).toEqual([]);
  });
});
