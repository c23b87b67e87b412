// The schemas in the system's xmllint, as an editor or a CI job on the machine would run them.
// The libxml2 of Debian 12 and Ubuntu 22.04 (2.9) reads XML Schema regular expressions strictly,
// where the WebAssembly build schemas.test.ts uses is lenient (it took `\$`, which XML Schema 1.0
// has no escape for). Where no xmllint is installed (apt-get install libxml2-utils) the suite is
// skipped with one line; the WebAssembly suite still runs.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOTS, type LanguageFile } from './compiler-table.js';
import { BEYOND_THE_SCHEMA, fixtures, rel, repoRoot, SCHEMA_OF, structuralCases } from './schema-fixtures.js';

const FILES: readonly LanguageFile[] = ROOTS.map((r) => r.file);
const hasXmllint = spawnSync('xmllint', ['--version']).status === 0;
if (!hasXmllint) console.warn('skipped: no xmllint on PATH for the system libxml2 schema checks (apt-get install libxml2-utils)');

/** xmllint's exit status for a schema that does not compile. */
const SCHEMA_COMPILE_ERROR = 5;

function xmllint(file: LanguageFile, paths: readonly string[]): { status: number | null; stderr: string } {
  const result = spawnSync('xmllint', ['--noout', '--schema', SCHEMA_OF[file], ...paths.map(rel)], { cwd: repoRoot, encoding: 'utf8' });
  return { status: result.status, stderr: result.stderr };
}

describe.runIf(hasXmllint)('the system xmllint with the schemas', () => {
  const all = fixtures();
  const valid = (file: LanguageFile) =>
    all
      .filter((f) => f.errors.length === 0)
      .map((f) => path.join(f.dir, file))
      .filter((p) => existsSync(p));

  it.each(FILES)('compiles the schema for %s', (file) => {
    const result = xmllint(file, valid(file).slice(0, 1));
    expect(result.stderr).not.toMatch(/failed to compile|not a valid regular expression|regexp error/);
    expect(result.status).not.toBe(SCHEMA_COMPILE_ERROR);
  });

  it.each(FILES)('validates %s of every valid fixture', (file) => {
    const paths = valid(file);
    expect(paths.length).toBeGreaterThan(4);
    const result = xmllint(file, paths);
    expect(result.stderr.split('\n').filter((l) => l !== '' && !l.endsWith(' validates'))).toEqual([]);
    expect(result.status).toBe(0);
  });

  it.each(structuralCases(all, FILES))('rejects $name', ({ fixture, file, path: p }) => {
    const result = xmllint(file, [p]);
    if (fixture in BEYOND_THE_SCHEMA) expect(result.status, `${fixture} is listed as beyond the schema`).toBe(0);
    else {
      expect(result.stderr).toContain('fails to validate');
      expect(result.status).not.toBe(SCHEMA_COMPILE_ERROR);
    }
  });
});
