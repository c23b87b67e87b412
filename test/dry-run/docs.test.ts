// docs/dry-run.md and the README show real output: it must stay what the command prints.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dryRun, SECRETS, SHOP } from './run.js';

const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const DOC = readFileSync(fileURLToPath(new URL('../../docs/dry-run.md', import.meta.url)), 'utf8');
const blocks = (lang: string) => [...DOC.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);

describe('docs/dry-run.md', () => {
  it('shows the plan the command prints', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'signup'], { ...SECRETS });
    expect(blocks('text')[0]).toBe(run.stdout);
  });

  it('shows the simulation the command prints', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'signup', '--param', 'email=ann@example.com', '--param', 'newsletter=yes', '--param', 'name=Ann'], { ...SECRETS });
    const shown = blocks('text')[1]!.split('\n').slice(2).join('\n');
    expect(shown).toBe(run.stdout);
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
