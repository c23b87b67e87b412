// What `npm pack` puts in the package: besides bin/ and dist/, the schemas that editors and
// `init` use, and the docs that diagnostics point to (unsupported-feature names the migration
// guide). Asked of npm itself, without building (--ignore-scripts).
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers.js';

describe('the npm package', () => {
  it('holds schema/, the docs that messages point to, and the CLI', async () => {
    const r = await execa('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repoRoot, reject: false, timeout: 60_000 });
    expect(r.exitCode).toBe(0);
    const files = (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(['schema/endpoints.xsd', 'schema/email-sending-configuration.xsd', 'schema/security.xsd']));
    expect(files).toEqual(expect.arrayContaining(['docs/migrating-from-openendpoints.md', 'docs/language.md', 'docs/editors.md', 'docs/diagnostics.md']));
    expect(files).toEqual(expect.arrayContaining(['bin/endpoint-service.js', 'dist/cli/main.js', 'dist/cli/init.js']));
    expect(files.filter((f) => f.startsWith('test/') || f.startsWith('fixtures/') || f.startsWith('src/'))).toEqual([]);
  });
});
