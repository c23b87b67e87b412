// schema/*.xsd run by xmllint (xmllint-wasm, libxml2 compiled to WebAssembly) on the fixtures:
// every valid application validates, every invalid one whose problem is structural is rejected.
// schemas.test.ts compares the schemas with the compiler's element table; this file is in the
// slow tier (vitest.config.ts): it runs xmllint on every fixture.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { validateXML } from 'xmllint-wasm';
import { describe, expect, it } from 'vitest';
import { ROOTS, type LanguageFile } from './compiler-table.js';
import { BEYOND_THE_SCHEMA, fixtures, rel, repoRoot, SCHEMA_OF, STRUCTURAL, structuralCases } from './schema-fixtures.js';

const schemaText = (file: LanguageFile) => readFileSync(path.join(repoRoot, SCHEMA_OF[file]), 'utf8');

const ALL = fixtures();

async function lint(file: LanguageFile, paths: readonly string[]) {
  return validateXML({ xml: paths.map((p) => ({ fileName: rel(p), contents: readFileSync(p, 'utf8') })), schema: [schemaText(file)] });
}

describe('xmllint with the schemas', () => {
  it('finds valid and invalid fixtures (else this checks nothing)', () => {
    expect(ALL.filter((f) => f.errors.length === 0).length).toBeGreaterThan(15);
    expect(ALL.filter((f) => f.errors.some((e) => STRUCTURAL.has(e.code))).length).toBeGreaterThan(30);
  });

  it.each(ROOTS.map((r) => r.file))('validates %s of every valid fixture, the README example (fixtures/contact-form) among them', async (file) => {
    const paths = ALL.filter((f) => f.errors.length === 0)
      .map((f) => path.join(f.dir, file))
      .filter((p) => existsSync(p));
    if (file === 'endpoints.xml') expect(paths.map(rel)).toContain('fixtures/contact-form/endpoints.xml');
    expect(paths.length).toBeGreaterThan(4);
    const result = await lint(file, paths);
    expect(result.errors.map((e) => e.rawMessage)).toEqual([]);
    expect(result.valid).toBe(true);
  });

  const structural = structuralCases(
    ALL,
    ROOTS.map((r) => r.file),
  );

  it.each(structural)('rejects $name', async ({ fixture, file, path: p }) => {
    const result = await lint(file, [p]);
    if (fixture in BEYOND_THE_SCHEMA) expect(result.valid, `${fixture} is listed as beyond the schema: remove it from the list`).toBe(true);
    else expect(result.valid).toBe(false);
  });

  it('accepts a schema reference in the file itself (xsi:noNamespaceSchemaLocation; validate accepts it too: test/cli/init.e2e.test.ts)', async () => {
    const text = readFileSync(path.join(repoRoot, 'fixtures/contact-form/endpoints.xml'), 'utf8').replace(
      '<endpoint-folder>',
      '<endpoint-folder xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="../../schema/endpoints.xsd">',
    );
    expect(text).toContain('xsi:noNamespaceSchemaLocation');
    const result = await validateXML({ xml: [{ fileName: 'endpoints.xml', contents: text }], schema: [schemaText('endpoints.xml')] });
    expect(result.errors.map((e) => e.rawMessage)).toEqual([]);
  });
});
