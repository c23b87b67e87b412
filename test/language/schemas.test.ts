// schema/*.xsd, for editors and CI, against the element table the compiler uses (learnt from it
// in compiler-table.ts), both ways: every element and attribute the compiler accepts where it
// accepts it, nothing it does not, required ones required. schemas-on-fixtures.test.ts runs the
// schemas on the fixtures.
//
// What XML Schema 1.0 cannot say, so the schema is looser there and validate is the judge:
// which children a <task> takes depends on its class attribute, so the schema's <task> takes the
// children of every class and requires none of them.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UNSUPPORTED_ELEMENTS } from '../../src/compiler/context.js';
import { TASK_KINDS } from '../../src/tasks/registry.js';
import { compilerTable, ROOTS } from './compiler-table.js';
import { repoRoot, SCHEMA_OF } from './schema-fixtures.js';
import { readXsd, type XsdSchema } from './xsd-table.js';

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
