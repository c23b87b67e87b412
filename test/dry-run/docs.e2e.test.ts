// docs/dry-run.md, docs/webhooks.md and the README show real output: it must stay what the command prints.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dryRun, SECRETS, SHOP } from './run.js';

const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
const WEBHOOKS = readFileSync(fileURLToPath(new URL('../../docs/webhooks.md', import.meta.url)), 'utf8');
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const DOC = readFileSync(fileURLToPath(new URL('../../docs/dry-run.md', import.meta.url)), 'utf8');
const blocks = (lang: string) => [...DOC.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);

describe('docs/dry-run.md', () => {
  it('shows the plan the command prints', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'signup'], { ...SECRETS });
    expect(blocks('text')[0]).toBe(run.stdout);
  });

  it('shows the simulation the command prints', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'signup', '--param', 'email=ann@example.com', '--param', 'newsletter=yes', '--param', 'name=Ann'], {
      ...SECRETS,
    });
    const shown = blocks('text')[1]!.split('\n').slice(2).join('\n');
    expect(shown).toBe(run.stdout);
  });

  it('shows the simulated webhook the command prints', async () => {
    const examples = createRequire(import.meta.url)('@octokit/webhooks-examples') as { name: string; examples: Record<string, unknown>[] }[];
    const delivery = examples.find((e) => e.name === 'issues')!.examples.find((e) => e.action === 'opened')!;
    const dir = mkdtempSync(join(tmpdir(), 'dry-run-docs-'));
    try {
      writeFileSync(join(dir, 'issues.json'), JSON.stringify(delivery, null, 2) + '\n');
      const webhooks = fileURLToPath(new URL('../../fixtures/dry-run/webhooks/endpoints.xml', import.meta.url));
      const run = await dryRun([webhooks, '--endpoint', 'github', '--body', 'issues.json', '--header', 'X-GitHub-Event: issues'], {}, dir);
      expect(blocks('text')[2]!.split('\n').slice(2).join('\n')).toBe(run.stdout);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('shows the graph the command prints', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'signup', '--format', 'mermaid'], { ...SECRETS });
    expect(blocks('mermaid')[0]).toBe(run.stdout);
  });
});

describe('README.md', () => {
  it("shows the example's plan as a terminal shows it: the warning about the unset variable (stderr), then the plan", async () => {
    const command = 'npx endpoint-service dry-run --endpoint contact fixtures/contact-form/endpoints.xml';
    const shown = new RegExp('```text\\n\\$ ' + command.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '\\n([\\s\\S]*?)```').exec(README)![1]!;
    const run = await dryRun(['--endpoint', 'contact', 'fixtures/contact-form/endpoints.xml'], {}, ROOT);
    expect(run.stderr).toContain('env-not-set');
    expect(shown).toBe(run.stderr + run.stdout);
  });
});

describe('docs/webhooks.md', () => {
  it('shows the webhooks example simulated from its payload file as the command prints it', async () => {
    const block = /```text\n(\$ CHAT_WEBHOOK_URL=[\s\S]*?fixtures\/webhooks\/endpoints\.xml)\n([\s\S]*?)```/.exec(WEBHOOKS)!;
    expect(block[1]).toBe(
      [
        '$ CHAT_WEBHOOK_URL=http://127.0.0.1:4000/chat RELAY_URL=http://127.0.0.1:4000/relay GITHUB_WEBHOOK_SECRET=It-is-a-secret \\',
        '  npx endpoint-service dry-run --endpoint github --body fixtures/webhooks/issues-opened.json \\',
        "  --header 'X-GitHub-Event: issues' --header 'X-GitHub-Delivery: 72d3162e-cc78-11e3-81ab-4c9367dc0958' \\",
        '  fixtures/webhooks/endpoints.xml',
      ].join('\n'),
    );
    const run = await dryRun(
      [
        '--endpoint',
        'github',
        '--body',
        'fixtures/webhooks/issues-opened.json',
        '--header',
        'X-GitHub-Event: issues',
        '--header',
        'X-GitHub-Delivery: 72d3162e-cc78-11e3-81ab-4c9367dc0958',
        'fixtures/webhooks/endpoints.xml',
      ],
      { CHAT_WEBHOOK_URL: 'http://127.0.0.1:4000/chat', RELAY_URL: 'http://127.0.0.1:4000/relay', GITHUB_WEBHOOK_SECRET: 'It-is-a-secret' },
      ROOT,
    );
    expect(run.exitCode).toBe(0);
    expect(block[2]).toBe(run.stderr + run.stdout);
  });
});
