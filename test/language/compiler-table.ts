// The language's element table, learnt from the compiler itself: small probe applications are
// compiled with CompileOptions.onElementRead, which hands over each element with the shape the
// compiler reads it with (the attributes and children it knows there, whether it takes text).
// Starting from each file's root, every child a shape names is added to a probe and read in
// turn, so the table holds every element in every place the compiler accepts it, with nothing
// typed in by hand but the few contexts below. docs/language.md and schema/*.xsd are held to this
// table both ways (language.test.ts, schemas.test.ts).
//
// Beyond the names, probes tell:
// - refused: an element or attribute that a shape lists but the compiler then refuses where it
//   stands (<forward-to-endpoint> in <error>, <output-intermediate-value> in an Email task,
//   <mx-address>), by the diagnostic it raises at the probe's own line;
// - required: an attribute whose absence raises missing-attribute, a child whose absence raises
//   missing-element at the parent;
// - open content: an element that takes children of any name (<xml-body>).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ElementShape } from '../../src/compiler/context.js';
import { compileApplication, type Diagnostic } from '../../src/compiler/index.js';
import { TASK_KINDS } from '../../src/tasks/registry.js';

export type LanguageFile = 'endpoints.xml' | 'email-sending-configuration.xml' | 'security.xml';

export const ROOTS: readonly { readonly file: LanguageFile; readonly root: string }[] = [
  { file: 'endpoints.xml', root: 'endpoint-folder' },
  { file: 'email-sending-configuration.xml', root: 'email-sending-configuration' },
  { file: 'security.xml', root: 'security' },
];

/** An element in one place: `key` is its name, or `task(CLASS)` for each task kind. */
export interface ElementEntry {
  readonly file: LanguageFile;
  /** The key of the element it stands in; null for a root. */
  readonly parent: string | null;
  readonly name: string;
  readonly key: string;
  /** Attributes the compiler accepts here. */
  readonly attributes: readonly string[];
  /** Attributes its shape lists that the compiler refuses here (download-filename in <error>). */
  readonly refusedAttributes: readonly string[];
  readonly requiredAttributes: readonly string[];
  /** Children accepted here, by name. */
  readonly children: readonly string[];
  /** Children its shape lists that the compiler refuses here. */
  readonly refusedChildren: readonly string[];
  readonly requiredChildren: readonly string[];
  readonly text: boolean;
  /** Takes child elements of any name. */
  readonly anyElements: boolean;
}

/** Codes that mean "not here" when raised at an element's or attribute's own line. */
const REFUSED = new Set(['unsupported-feature', 'email-output', 'not-allowed-in-error', 'unknown-element']);

interface Node {
  readonly name: string;
  readonly attributes: readonly (readonly [string, string])[];
  readonly children: readonly Node[];
  readonly text?: string;
}

/** What some elements need around them to be read at all. */
const CONTEXT: Readonly<Record<string, { attributes?: readonly (readonly [string, string])[]; siblings?: readonly Node[] }>> = {
  // Whitelist entries are read only beside the redirect they restrict.
  'redirect-prefix-whitelist-entry': { siblings: [{ name: 'redirect-to', attributes: [], children: [], text: 'https://www.example.com/' }] },
  // An output without a name is reported by the task and not read further.
  'output-intermediate-value': { attributes: [['name', 'probe-value'], ['jsonpath', '$.v']] },
};

/** One element of a probe path, with what stands beside it. */
interface Step {
  readonly name: string;
  readonly attributes: readonly (readonly [string, string])[];
  readonly siblings: readonly Node[];
}

function stepFor(name: string, className?: string): Step {
  const context = CONTEXT[name];
  const attributes = className === undefined ? (context?.attributes ?? []) : [['class', className] as const];
  return { name, attributes, siblings: context?.siblings ?? [] };
}

/** The probe tree for a path; the last step gets `attributes` and `children`. */
function treeOf(steps: readonly Step[], attributes: readonly (readonly [string, string])[], children: readonly Node[]): Node {
  let node: Node = { name: steps.at(-1)!.name, attributes, children };
  for (let k = steps.length - 2; k >= 0; k--) {
    const inner = steps[k + 1]!;
    node = { name: steps[k]!.name, attributes: steps[k]!.attributes, children: [...inner.siblings, node] };
  }
  return node;
}

/** One element per line and one attribute per line, so every diagnostic's line tells whose it is. */
function serialise(root: Node): { text: string; lineOf: Map<Node, number>; attributeLine: Map<Node, Map<string, number>> } {
  const lines: string[] = [];
  const lineOf = new Map<Node, number>();
  const attributeLine = new Map<Node, Map<string, number>>();
  const write = (node: Node): void => {
    lineOf.set(node, lines.length + 1);
    lines.push(`<${node.name}`);
    const own = new Map<string, number>();
    for (const [name, value] of node.attributes) {
      own.set(name, lines.length + 1);
      lines.push(`  ${name}="${value}"`);
    }
    attributeLine.set(node, own);
    if (node.children.length === 0 && node.text === undefined) {
      lines.push('/>');
      return;
    }
    lines.push(`>${node.text ?? ''}`);
    for (const child of node.children) write(child);
    lines.push(`</${node.name}>`);
  };
  write(root);
  return { text: lines.join('\n') + '\n', lineOf, attributeLine };
}

interface ProbeResult {
  readonly shapes: Map<number, ElementShape>;
  /** Diagnostics of the probed file, by line. */
  readonly codesAt: (line: number) => string[];
}

class Prober {
  private readonly dir = mkdtempSync(path.join(os.tmpdir(), 'es-language-table-'));
  compiles = 0;

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  probe(file: LanguageFile, root: Node): ProbeResult & { lineOf: Map<Node, number>; attributeLine: Map<Node, Map<string, number>> } {
    const { text, lineOf, attributeLine } = serialise(root);
    const files: Record<LanguageFile, string | null> = { 'endpoints.xml': '<endpoint-folder/>\n', 'email-sending-configuration.xml': null, 'security.xml': null };
    files[file] = text;
    for (const [name, content] of Object.entries(files)) {
      const target = path.join(this.dir, name);
      if (content === null) rmSync(target, { force: true });
      else writeFileSync(target, content);
    }
    const shapes = new Map<number, ElementShape>();
    this.compiles++;
    const result = compileApplication(path.join(this.dir, 'endpoints.xml'), {
      kinds: TASK_KINDS.list,
      mode: 'validate',
      env: {},
      smtpUrlGiven: true,
      onElementRead: (element, shape) => {
        if (path.basename(element.position.file) === file) shapes.set(element.line, shape);
      },
    });
    const mine = result.diagnostics.filter((d: Diagnostic) => path.basename(d.file) === file);
    return { shapes, codesAt: (line) => mine.filter((d) => d.line === line).map((d) => d.code), lineOf, attributeLine };
  }
}

function learn(): ElementEntry[] {
  const prober = new Prober();
  const entries: ElementEntry[] = [];
  const visited = new Set<string>();
  const queue: { file: LanguageFile; steps: Step[]; parent: string | null; key: string }[] = ROOTS.map((r) => ({
    file: r.file,
    steps: [stepFor(r.root)],
    parent: null,
    key: r.root,
  }));
  const refusedChildrenOf = new Map<string, Set<string>>();
  try {
    while (queue.length > 0) {
      const { file, steps, parent, key } = queue.shift()!;
      const edge = `${file} ${parent} > ${key}`;
      if (visited.has(edge)) continue;
      visited.add(edge);
      const step = steps.at(-1)!;
      const inContext = (attributes: Step['attributes'], children: readonly Node[]) => {
        const root = treeOf(steps, attributes, children);
        // The target is the innermost node of the path: the last child at each level.
        let node = root;
        for (let k = 1; k < steps.length; k++) node = node.children.at(-1)!;
        const probed = prober.probe(file, root);
        return { ...probed, node, line: probed.lineOf.get(node)! };
      };

      const seen = inContext(step.attributes, []);
      const refusedHere = seen.codesAt(seen.line).some((c) => REFUSED.has(c));
      const shape = seen.shapes.get(seen.line);
      if (refusedHere) {
        if (parent !== null) {
          const set = refusedChildrenOf.get(`${file} ${parent}`) ?? new Set<string>();
          set.add(step.name);
          refusedChildrenOf.set(`${file} ${parent}`, set);
        }
        continue;
      }
      if (shape === undefined) {
        throw new Error(`the compiler did not read <${step.name}> in <${parent}> (${file}): give it what it needs around it in CONTEXT (test/language/compiler-table.ts)`);
      }

      // Attributes refused here, though the shape lists them.
      const refusedAttributes: string[] = [];
      for (const attribute of shape.attributes) {
        if (step.attributes.some(([name]) => name === attribute)) continue;
        const p = inContext([...step.attributes, [attribute, 'probe.txt']], []);
        const line = p.attributeLine.get(p.node)!.get(attribute)!;
        if (p.codesAt(line).some((c) => REFUSED.has(c))) refusedAttributes.push(attribute);
      }
      const attributes = shape.attributes.filter((a) => !refusedAttributes.includes(a));

      // Required attributes: each one present alone removes one missing-attribute from the bare element.
      const missingAttributes = (given: Step['attributes']) => {
        const p = inContext(given, []);
        return p.codesAt(p.line).filter((c) => c === 'missing-attribute').length;
      };
      const bareAttributes = missingAttributes([]);
      const requiredAttributes = bareAttributes === 0 ? [] : attributes.filter((a) => missingAttributes([[a, step.name === 'task' ? step.attributes[0]![1] : 'probe']]) < bareAttributes);

      // Children: each is read in turn; refused ones are learnt when read.
      const childSteps = shape.children.flatMap((name) =>
        name === 'task' ? TASK_KINDS.list.map((kind) => ({ step: stepFor('task', kind.classNames[0]!), key: `task(${kind.classNames[0]!})` })) : [{ step: stepFor(name), key: name }],
      );
      const nodeOf = (s: Step): Node => ({ name: s.name, attributes: s.attributes, children: [] });
      const missingElements = (children: readonly Node[]) => {
        const p = inContext(step.attributes, children);
        return p.codesAt(p.line).filter((c) => c === 'missing-element').length;
      };
      const bareChildren = missingElements([]);
      const requiredChildren =
        bareChildren === 0 ? [] : [...new Set(childSteps.filter(({ step: s }) => missingElements([...s.siblings, nodeOf(s)]) < bareChildren).map(({ step: s }) => s.name))];

      // Open content: a child of a name no element has is not reported.
      const stranger: Node = { name: 'probe-open-content', attributes: [], children: [] };
      const open = inContext(step.attributes, [stranger]);
      const anyElements = !open.codesAt(open.lineOf.get(stranger)!).includes('unknown-element');

      entries.push({
        file,
        parent,
        name: step.name,
        key,
        attributes,
        refusedAttributes,
        requiredAttributes,
        children: [...new Set(shape.children)],
        refusedChildren: [],
        requiredChildren,
        text: shape.text === true,
        anyElements,
      });
      for (const child of childSteps) queue.push({ file, steps: [...steps, child.step], parent: key, key: child.key });
    }
  } finally {
    prober.close();
  }
  // Children refused where they stand are no children of that element.
  return entries.map((e) => {
    const refused = refusedChildrenOf.get(`${e.file} ${e.key}`) ?? new Set<string>();
    return { ...e, children: e.children.filter((c) => !refused.has(c)), refusedChildren: [...refused] };
  });
}

let table: ElementEntry[] | null = null;
/** Every element in every place, learnt once per test file. */
export function compilerTable(): readonly ElementEntry[] {
  table ??= learn();
  return table;
}

