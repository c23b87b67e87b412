// docs/language.md, the reference of the three files, against the element table the compiler
// uses (learnt from it in compiler-table.ts), both ways: every element in every place the
// compiler accepts it has a section, with exactly the attributes it accepts there (the required
// ones marked), its children and whether it takes text; no section, place or attribute that the
// compiler does not know. Each section names its diagnostics (real codes, linked) and has an
// example; the whole-file examples validate.
//
// A section is `### `<name>`` under a `## Elements of `FILE`` heading, with the lines
// **In:** (parents, or "the root of"), **Children:**, **Text:** (only for elements that take
// text), an attribute table whose first cells name the attributes, **Diagnostics:** and an
// ```xml example.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateXML } from 'xmllint-wasm';
import { describe, expect, it } from 'vitest';
import { UNSUPPORTED_ELEMENTS } from '../../src/compiler/context.js';
import { DIAGNOSTICS } from '../../src/compiler/diagnostic-codes.js';
import { compileApplication } from '../../src/compiler/index.js';
import { UNSUPPORTED_CLASSES } from '../../src/compiler/tasks.js';
import { parseXml } from '../../src/compiler/xml.js';
import { TASK_KINDS } from '../../src/tasks/registry.js';
import { compilerTable, ROOTS, type LanguageFile } from './compiler-table.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOC = readFileSync(path.join(repoRoot, 'docs/language.md'), 'utf8');

interface Section {
  readonly file: LanguageFile;
  readonly heading: string;
  readonly line: number;
  readonly name: string;
  parents: (string | null)[];
  children: string[] | null;
  anyElements: boolean;
  text: boolean;
  attributes: Map<string, boolean>;
  diagnostics: string[];
  examples: string[];
  hasInLine: boolean;
}

const table = compilerTable();
const taskKeys = [...new Set(table.filter((e) => e.name === 'task').map((e) => e.key))];

function readSections(): Section[] {
  const sections: Section[] = [];
  let file: LanguageFile | null = null;
  let current: Section | null = null;
  let example: string[] | null = null;
  DOC.split('\n').forEach((line, index) => {
    if (example !== null) {
      if (line.startsWith('```')) {
        current?.examples.push(example.join('\n'));
        example = null;
      } else example.push(line);
      return;
    }
    if (line.startsWith('```xml')) {
      example = [];
      return;
    }
    if (line.startsWith('## ')) {
      current = null;
      const m = /^## Elements of `([a-z-]+\.xml)`$/.exec(line);
      file = m ? (m[1] as LanguageFile) : null;
      return;
    }
    if (line.startsWith('### ')) {
      const m = /^### `<([a-z-]+)>`/.exec(line);
      if (file === null || m === null) {
        if (m !== null) throw new Error(`docs/language.md:${index + 1}: an element section outside "## Elements of FILE"`);
        current = null;
        return;
      }
      current = {
        file,
        heading: line.slice(4),
        line: index + 1,
        name: m[1]!,
        parents: [],
        children: null,
        anyElements: false,
        text: false,
        attributes: new Map(),
        diagnostics: [],
        examples: [],
        hasInLine: false,
      };
      sections.push(current);
      return;
    }
    if (current === null) return;
    if (line.startsWith('**In:**')) {
      current.hasInLine = true;
      if (line.includes('the root of')) current.parents.push(null);
      for (const m of line.matchAll(/`<([a-z-]+)(?: class="([A-Za-z]+)")?>`/g)) {
        if (m[1] === 'task') current.parents.push(...(m[2] ? [`task(${m[2]})`] : taskKeys));
        else current.parents.push(m[1]!);
      }
    } else if (line.startsWith('**Children:**')) {
      current.anyElements = line.includes('any elements');
      current.children = [...line.matchAll(/`<([a-z-]+)>`/g)].map((m) => m[1]!);
    } else if (line.startsWith('**Text:**')) current.text = true;
    else if (line.startsWith('**Diagnostics:**')) current.diagnostics = [...line.matchAll(/\[`([a-z-]+)`\]\(diagnostics\.md\)/g)].map((m) => m[1]!);
    else if (line.startsWith('| `')) {
      const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
      for (const m of cells[1]!.matchAll(/`([a-z-]+)`/g)) current.attributes.set(m[1]!, cells[2] === 'yes');
    }
  });
  return sections;
}

const sections = readSections();
const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();
const place = (file: string, parent: string | null, name: string) => `${file}: <${name}> in ${parent === null ? 'the root' : `<${parent}>`}`;

describe('docs/language.md against the compiler', () => {
  it('has element sections for every file (else this checks nothing)', () => {
    for (const { file } of ROOTS) expect(sections.filter((s) => s.file === file).length, file).toBeGreaterThan(1);
    expect(sections.length).toBeGreaterThan(40);
  });

  it('documents every element in every place the compiler accepts it, in one section', () => {
    const problems: string[] = [];
    for (const e of table) {
      const found = sections.filter((s) => s.file === e.file && s.name === e.name && s.parents.includes(e.parent));
      if (found.length !== 1) problems.push(`${place(e.file, e.parent, e.name)}: ${found.length} sections`);
    }
    expect(problems).toEqual([]);
  });

  it('documents no element, and no place of one, that the compiler does not know', () => {
    const problems: string[] = [];
    for (const s of sections) {
      if (!s.hasInLine || s.parents.length === 0) problems.push(`${s.heading} (line ${s.line}) says nowhere where it stands`);
      for (const parent of s.parents) {
        if (!table.some((e) => e.file === s.file && e.name === s.name && e.parent === parent))
          problems.push(`${s.heading} (line ${s.line}): ${place(s.file, parent, s.name)} is not in the compiler`);
      }
    }
    expect(problems).toEqual([]);
  });

  it.each(sections.map((s) => [s.heading, s] as const))('%s: the attributes the compiler accepts there, required ones marked', (_, s) => {
    const entries = table.filter((e) => e.file === s.file && e.name === s.name && s.parents.includes(e.parent));
    expect(sorted(s.attributes.keys())).toEqual(sorted(entries.flatMap((e) => e.attributes)));
    expect(sorted([...s.attributes].filter(([, required]) => required).map(([n]) => n))).toEqual(sorted(entries.flatMap((e) => e.requiredAttributes)));
  });

  it.each(sections.map((s) => [s.heading, s] as const))('%s: its children and whether it takes text', (_, s) => {
    const entries = table.filter((e) => e.file === s.file && e.name === s.name && s.parents.includes(e.parent));
    expect(s.children, 'a **Children:** line').not.toBeNull();
    expect(s.anyElements).toBe(entries.some((e) => e.anyElements));
    expect(sorted(s.children!)).toEqual(sorted(entries.flatMap((e) => e.children)));
    expect(s.text, 'a **Text:** line exactly when it takes text').toBe(entries.some((e) => e.text));
  });

  it.each(sections.map((s) => [s.heading, s] as const))('%s: names its diagnostics and shows an example', (_, s) => {
    expect(s.diagnostics.length).toBeGreaterThan(0);
    expect(s.diagnostics.filter((code) => !(code in DIAGNOSTICS))).toEqual([]);
    expect(s.examples.length).toBeGreaterThan(0);
    for (const example of s.examples) {
      const parsed = parseXml(`<example>${example}</example>`, 'example.xml');
      expect(parsed.ok, example).toBe(true);
      expect(example).toContain(`<${s.name}`);
    }
  });

  it('links only diagnostic codes that exist', () => {
    const linked = [...DOC.matchAll(/\[`([a-z-]+)`\]\(diagnostics\.md\)/g)].map((m) => m[1]!);
    expect(linked.length).toBeGreaterThan(100);
    expect(linked.filter((code) => !(code in DIAGNOSTICS))).toEqual([]);
  });

  it('lists every task class of the registry on <task>', () => {
    const task = sections.find((s) => s.name === 'task')!;
    const row = DOC.split('\n').find((l) => l.startsWith('| `class` |'))!;
    expect(task).toBeDefined();
    for (const name of TASK_KINDS.list.flatMap((k) => k.classNames)) expect(row).toContain(`\`${name}\``);
  });

  it('lists every OpenEndpoints feature the compiler refuses, with what to write instead', () => {
    const notSupported = DOC.slice(DOC.indexOf('## Not supported'));
    const refused = [...UNSUPPORTED_ELEMENTS].map((n) => `\`<${n}>\``);
    refused.push(...[...UNSUPPORTED_CLASSES].map((n) => `\`${n}\``), '`xslt-file`', '`<mx-address>`');
    for (const name of refused) expect(notSupported, name).toMatch(new RegExp(`\\| [^\\n]*${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[^\\n]*\\| \\S`));
  });
});

describe('the whole-file examples of docs/language.md', () => {
  const SCHEMA: Record<string, string> = {
    'endpoint-folder': 'endpoints.xml',
    'email-sending-configuration': 'email-sending-configuration.xml',
    security: 'security.xml',
  };
  const wholeFiles = sections
    .flatMap((s) => s.examples)
    .concat([...DOC.slice(0, DOC.indexOf('## The application directory')).matchAll(/```xml\n([\s\S]*?)```/g)].map((m) => m[1]!))
    .filter(
      (x) =>
        /^<(endpoint-folder|email-sending-configuration|security)[ >]/.test(x) &&
        (x.trimEnd().endsWith('</endpoint-folder>') || x.trimEnd().endsWith('</email-sending-configuration>') || x.trimEnd().endsWith('</security>')),
    );

  it('finds the examples of whole files', () => {
    expect(wholeFiles.length).toBeGreaterThanOrEqual(4);
  });

  it.each(wholeFiles.map((x) => [x.split('\n')[0]!, x] as const))('%s … validates with no error, and by the schema', async (_, text) => {
    const root = /^<([a-z-]+)/.exec(text)![1]!;
    const file = SCHEMA[root]!;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'es-language-example-'));
    try {
      writeFileSync(path.join(dir, 'endpoints.xml'), file === 'endpoints.xml' ? text : '<endpoint-folder/>\n');
      if (file !== 'endpoints.xml') writeFileSync(path.join(dir, file), text);
      const result = compileApplication(path.join(dir, 'endpoints.xml'), { kinds: TASK_KINDS.list, mode: 'validate', env: {} });
      expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      const schema = readFileSync(path.join(repoRoot, 'schema', file.replace(/\.xml$/, '.xsd')), 'utf8');
      const lint = await validateXML({ xml: [{ fileName: file, contents: text }], schema: [schema] });
      expect(lint.errors.map((e) => e.rawMessage)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
