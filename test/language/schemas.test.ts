// schema/*.xsd, for editors and CI, against the element table the compiler uses (learnt from it
// in compiler-table.ts), both ways: every element and attribute the compiler accepts where it
// accepts it, nothing it does not, required ones required. Then xmllint (xmllint-wasm, libxml2
// compiled to WebAssembly) runs the schemas on the fixtures: every valid application validates,
// every invalid one whose problem is structural is rejected.
//
// What XML Schema 1.0 cannot say, so the schema is looser there and validate is the judge:
// which children a <task> takes depends on its class attribute, so the schema's <task> takes the
// children of every class and requires none of them.
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { validateXML } from 'xmllint-wasm';
import { describe, expect, it } from 'vitest';
import { UNSUPPORTED_ELEMENTS } from '../../src/compiler/context.js';
import { TASK_KINDS } from '../../src/tasks/registry.js';
import { compilerTable, ROOTS, type LanguageFile } from './compiler-table.js';
import { BEYOND_THE_SCHEMA, fixtures, rel, repoRoot, SCHEMA_OF, STRUCTURAL, structuralCases } from './schema-fixtures.js';
import { readXsd, type XsdSchema } from './xsd-table.js';

const schemaText = (file: LanguageFile) => readFileSync(path.join(repoRoot, SCHEMA_OF[file]), 'utf8');

/** The schema's name for the element a compiler entry stands in: one <task> for every class. */
const xsdKey = (key: string | null) => (key === null ? null : key.startsWith('task(') ? 'task' : key);
const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();

describe.each(ROOTS)('schema for $file', ({ file, root }) => {
  const xsd: XsdSchema = readXsd(path.join(repoRoot, SCHEMA_OF[file]));
  const table = compilerTable().filter((e) => e.file === file);
  /** The compiler's entries in one place of the schema: both task classes fall into one. */
  const compilerAt = (parent: string | null, name: string) => table.filter((e) => xsdKey(e.parent) === parent && e.name === name);
  const places = sorted(table.map((e) => `${xsdKey(e.parent)} > ${e.name}`));

  it('has the root element of its file, and only that one', () => {
    expect(xsd.roots).toEqual([root]);
  });

  it('declares every element the compiler accepts, where it accepts it, and no other', () => {
    expect(places.length).toBeGreaterThan(1);
    expect(sorted(xsd.entries.map((e) => `${e.parent} > ${e.name}`))).toEqual(places);
  });

  it.each(places)('%s: the same attributes, the same ones required', (place) => {
    const [parent, name] = place.split(' > ') as [string, string];
    const entries = compilerAt(parent === 'null' ? null : parent, name);
    const x = xsd.entries.find((e) => `${e.parent} > ${e.name}` === place)!;
    expect(sorted(x.attributes.keys())).toEqual(sorted(entries.flatMap((e) => e.attributes)));
    expect(sorted([...x.attributes].filter(([, a]) => a.required).map(([n]) => n))).toEqual(sorted(entries.flatMap((e) => e.requiredAttributes)));
  });

  it.each(places)('%s: the same children, text and open content', (place) => {
    const [parent, name] = place.split(' > ') as [string, string];
    const entries = compilerAt(parent === 'null' ? null : parent, name);
    const x = xsd.entries.find((e) => `${e.parent} > ${e.name}` === place)!;
    expect(sorted(x.children.keys())).toEqual(sorted(entries.flatMap((e) => e.children)));
    expect(x.text).toBe(entries.some((e) => e.text));
    expect(x.anyElements).toBe(entries.some((e) => e.anyElements));
    const required = sorted([...x.children].filter(([, min]) => min > 0).map(([n]) => n));
    // One <task> for every class: it cannot require what only one class requires.
    if (name === 'task') expect(required).toEqual([]);
    else expect(required).toEqual(sorted(entries.flatMap((e) => e.requiredChildren)));
  });

  it('names no element the compiler refuses as an unsupported OpenEndpoints feature', () => {
    const refused = new Set([...UNSUPPORTED_ELEMENTS, ...table.flatMap((e) => e.refusedChildren)]);
    // Refused in one place, accepted in another (<after> in <error> and in <success>): only the refused place counts.
    const wrong = xsd.entries.filter((x) => refused.has(x.name) && !table.some((e) => xsdKey(e.parent) === x.parent && e.name === x.name));
    expect(wrong.map((x) => `${x.parent} > ${x.name}`)).toEqual([]);
  });

  it('gives every element and attribute declaration a help text for hover', () => {
    expect(xsd.undocumented).toEqual([]);
  });
});

describe('schema/endpoints.xsd, values', () => {
  it('offers every task class of the registry', () => {
    const xsd = readXsd(path.join(repoRoot, SCHEMA_OF['endpoints.xml']));
    expect(sorted(xsd.enumeration('task-class'))).toEqual(sorted(TASK_KINDS.list.flatMap((k) => k.classNames)));
  });
});

// --- xmllint on the fixtures --------------------------------------------------------------

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

  const structural = structuralCases(ALL, ROOTS.map((r) => r.file));

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

