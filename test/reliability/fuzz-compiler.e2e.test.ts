// Compiler fuzzing (issue 7): the real fixtures, mutated structurally (elements and attributes
// deleted, duplicated, swapped, values replaced by hostile ones) and byte-wise (truncated,
// random bytes injected). Whatever the input, compileApplication must return diagnostics,
// never throw, and the built `validate` must exit 0 or 1 without a stack trace.
//
// Bounded and reproducible: the run's seed (test/setup/fuzz-seed.ts: fixed in CI, random
// elsewhere, printed; FUZZ_SEED replays a run), FUZZ_RUNS to go further by hand. A case that ever fails belongs in fixtures/regressions/ with a
// test in regressions.e2e.test.ts.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DOMParser, XMLSerializer, type Document, type Element } from '@xmldom/xmldom';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Chalk } from 'chalk';
import { formatPlanDot } from '../../src/cli/plan/format-dot.js';
import { formatPlanJson } from '../../src/cli/plan/format-json.js';
import { formatPlanMermaid } from '../../src/cli/plan/format-mermaid.js';
import { formatPlanText } from '../../src/cli/plan/format-text.js';
import { buildPlan } from '../../src/cli/plan/simulate.js';
import { compileApplication, type CompileMode, type CompileResult } from '../../src/compiler/index.js';
import { TASK_KINDS } from '../../src/tasks/registry.js';
import { STACK_TRACE, assertBuilt, repoRoot, run } from '../cli/helpers.js';
import { fuzzSeed } from '../helpers/fuzz-seed.js';

const SEED = fuzzSeed();
const IN_PROCESS_RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const BINARY_RUNS = Number(process.env.FUZZ_BINARY_RUNS ?? 8);
const PLAN_RUNS = Number(process.env.FUZZ_PLAN_RUNS ?? 100);
// Printed up front so that a failure can be replayed even when the failing run hangs.
console.log(`fuzz-compiler: seed ${SEED} (replay with FUZZ_SEED=${SEED})`);

/** The application directories mutated; each file listed is a mutation target. */
const FIXTURES: { dir: string; files: string[] }[] = [
  { dir: 'fixtures/contact-form', files: ['endpoints.xml', 'email-sending-configuration.xml'] },
  { dir: 'fixtures/tasks/signup', files: ['endpoints.xml', 'email-sending-configuration.xml'] },
  { dir: 'fixtures/openendpoints-stripped', files: ['endpoints.xml', 'email-sending-configuration.xml', 'security.xml'] },
  { dir: 'fixtures/serve/basic', files: ['endpoints.xml'] },
  { dir: 'fixtures/serve/auth', files: ['endpoints.xml', 'security.xml'] },
];

/**
 * Values that reach deep checks rather than the XML parser: placeholders (broken, unknown,
 * env), paths escaping their folder, absurd durations and numbers, broken JSONPath, XPath and
 * regexes, names of other elements and tasks.
 */
const HOSTILE_VALUES = [
  '',
  ' ',
  '${',
  '${}',
  '${x',
  '$${name}',
  '${nope}',
  '${env:}',
  '${env:ENDPOINT_SERVICE_FUZZ_UNSET}',
  '${internal-error-text}',
  '${request-id}${request-id}',
  '../../../etc/passwd',
  '/etc/passwd',
  'static/../endpoints.xml',
  '\\\\server\\share',
  'C:\\windows',
  '0',
  '-1',
  '1e400',
  '99999999999999999999999s',
  '0ms',
  'NaN',
  '10x',
  'true',
  'TRUE',
  '$',
  '$..*',
  '$[',
  '$.a[?(@.b==1)]',
  '//',
  '/a/b[',
  'count(//*)',
  '(',
  '(?<x>',
  '[z-a]',
  '(a+)+$',
  'HttpRequest',
  'Email',
  'endpoints.task.EmailTask',
  'CreateShortLinkToEndpointTask',
  'wait',
  'background',
  'text/html',
  'application/json',
  'application/xml',
  'cid:../../x',
  'http://',
  'javascript:alert(1)',
  '"quoted"',
  '<tag>',
  '&amp;',
  'é€𝄞',
  '\u200b',
  'a'.repeat(5000),
];

const HOSTILE_TEXT = ['{"a": ${x}}', '{', '<a><b></a>', '<![CDATA[', ']]>', '${name', 'x'.repeat(20_000), '\t\n\r'];

type Mutation =
  | { kind: 'delete-element'; at: number }
  | { kind: 'duplicate-element'; at: number }
  | { kind: 'swap-elements'; a: number; b: number }
  | { kind: 'move-element'; at: number; into: number }
  | { kind: 'delete-attribute'; at: number }
  | { kind: 'duplicate-attribute'; at: number }
  | { kind: 'swap-attribute-values'; a: number; b: number }
  | { kind: 'hostile-attribute'; at: number; value: number }
  | { kind: 'hostile-text'; at: number; value: number }
  | { kind: 'rename-element'; at: number; to: number };

type ByteMutation =
  | { kind: 'truncate'; at: number }
  | { kind: 'inject'; at: number; bytes: Uint8Array }
  | { kind: 'delete-range'; at: number; length: number }
  | { kind: 'duplicate-range'; at: number; length: number };

const index = fc.nat({ max: 10_000 });
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('delete-element' as const), at: index }),
  fc.record({ kind: fc.constant('duplicate-element' as const), at: index }),
  fc.record({ kind: fc.constant('swap-elements' as const), a: index, b: index }),
  fc.record({ kind: fc.constant('move-element' as const), at: index, into: index }),
  fc.record({ kind: fc.constant('delete-attribute' as const), at: index }),
  fc.record({ kind: fc.constant('duplicate-attribute' as const), at: index }),
  fc.record({ kind: fc.constant('swap-attribute-values' as const), a: index, b: index }),
  fc.record({ kind: fc.constant('hostile-attribute' as const), at: index, value: index }),
  fc.record({ kind: fc.constant('hostile-text' as const), at: index, value: index }),
  fc.record({ kind: fc.constant('rename-element' as const), at: index, to: index }),
);
const byteMutationArb: fc.Arbitrary<ByteMutation> = fc.oneof(
  fc.record({ kind: fc.constant('truncate' as const), at: index }),
  fc.record({ kind: fc.constant('inject' as const), at: index, bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }),
  fc.record({ kind: fc.constant('delete-range' as const), at: index, length: fc.integer({ min: 1, max: 200 }) }),
  fc.record({ kind: fc.constant('duplicate-range' as const), at: index, length: fc.integer({ min: 1, max: 400 }) }),
);

const caseArb = fc.record({
  fixture: fc.nat({ max: FIXTURES.length - 1 }),
  file: fc.nat({ max: 2 }),
  mutations: fc.array(mutationArb, { minLength: 1, maxLength: 6 }),
  bytes: fc.array(byteMutationArb, { maxLength: 3 }),
  mode: fc.constantFrom<CompileMode>('validate', 'serve', 'dry-run'),
});

function elements(doc: Document): Element[] {
  const all: Element[] = [];
  const walk = (node: Element) => {
    all.push(node);
    for (let child = node.firstChild; child !== null; child = child.nextSibling) if (child.nodeType === 1) walk(child as Element);
  };
  if (doc.documentElement) walk(doc.documentElement);
  return all;
}

/** Applies DOM-level mutations; indices are taken modulo what exists, so every case applies. */
function mutateXml(source: string, mutations: readonly Mutation[]): string {
  const doc = new DOMParser({ onError: () => {} }).parseFromString(source, 'text/xml');
  const names = [...new Set(elements(doc).map((e) => e.tagName))];
  for (const m of mutations) {
    const els = elements(doc);
    const nonRoot = els.slice(1);
    const attrs = els.flatMap((e) => Array.from({ length: e.attributes.length }, (_, i) => ({ el: e, attr: e.attributes.item(i)! })));
    const pick = <T>(list: readonly T[], n: number): T | undefined => (list.length === 0 ? undefined : list[n % list.length]);
    switch (m.kind) {
      case 'delete-element': {
        const el = pick(nonRoot, m.at);
        el?.parentNode?.removeChild(el);
        break;
      }
      case 'duplicate-element': {
        const el = pick(nonRoot, m.at);
        el?.parentNode?.insertBefore(el.cloneNode(true), el.nextSibling);
        break;
      }
      case 'swap-elements': {
        const a = pick(nonRoot, m.a);
        const b = pick(nonRoot, m.b);
        // Swapping a node with its own ancestor would detach a subtree into itself.
        if (!a || !b || a === b || a.contains(b) || b.contains(a)) break;
        const marker = doc.createComment('swap');
        a.parentNode!.replaceChild(marker, a);
        b.parentNode!.replaceChild(a, b);
        marker.parentNode!.replaceChild(b, marker);
        break;
      }
      case 'move-element': {
        const el = pick(nonRoot, m.at);
        const into = pick(els, m.into);
        if (!el || !into || el === into || el.contains(into)) break;
        into.appendChild(el);
        break;
      }
      case 'delete-attribute': {
        const a = pick(attrs, m.at);
        a?.el.removeAttribute(a.attr.name);
        break;
      }
      case 'duplicate-attribute': {
        // A DOM cannot hold the same attribute twice; another element gets a copy instead,
        // which is how a misplaced attribute looks in a real file.
        const a = pick(attrs, m.at);
        const target = pick(els, m.at * 7 + 3);
        if (a && target) target.setAttribute(a.attr.name, a.attr.value);
        break;
      }
      case 'swap-attribute-values': {
        const a = pick(attrs, m.a);
        const b = pick(attrs, m.b);
        if (!a || !b) break;
        const va = a.attr.value;
        a.el.setAttribute(a.attr.name, b.attr.value);
        b.el.setAttribute(b.attr.name, va);
        break;
      }
      case 'hostile-attribute': {
        const a = pick(attrs, m.at);
        a?.el.setAttribute(a.attr.name, HOSTILE_VALUES[m.value % HOSTILE_VALUES.length]!);
        break;
      }
      case 'hostile-text': {
        const el = pick(els, m.at);
        if (!el) break;
        const all = [...HOSTILE_VALUES, ...HOSTILE_TEXT];
        while (el.firstChild) el.removeChild(el.firstChild);
        el.appendChild(doc.createTextNode(all[m.value % all.length]!));
        break;
      }
      case 'rename-element': {
        // An element of the language in the wrong place (e.g. <task> in <success>).
        const el = pick(nonRoot, m.at);
        const name = pick(names, m.to);
        if (!el || !name) break;
        const renamed = doc.createElement(name);
        for (let i = 0; i < el.attributes.length; i++) renamed.setAttribute(el.attributes.item(i)!.name, el.attributes.item(i)!.value);
        while (el.firstChild) renamed.appendChild(el.firstChild);
        el.parentNode!.replaceChild(renamed, el);
        break;
      }
    }
  }
  return new XMLSerializer().serializeToString(doc);
}

function mutateBytes(input: Buffer, mutations: readonly ByteMutation[]): Buffer {
  let bytes = input;
  for (const m of mutations) {
    const at = bytes.length === 0 ? 0 : m.at % (bytes.length + 1);
    switch (m.kind) {
      case 'truncate':
        bytes = bytes.subarray(0, at);
        break;
      case 'inject':
        bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(m.bytes), bytes.subarray(at)]);
        break;
      case 'delete-range':
        bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + m.length)]);
        break;
      case 'duplicate-range':
        bytes = Buffer.concat([bytes.subarray(0, at + m.length), bytes.subarray(at)]);
        break;
    }
  }
  return bytes;
}

let workDir: string;
/** One private copy of each fixture directory; the mutated file is rewritten per case. */
const copies: { dir: string; files: string[]; originals: Map<string, string> }[] = [];

beforeAll(() => {
  workDir = mkdtempSync(path.join(tmpdir(), 'es-fuzz-'));
  FIXTURES.forEach((f, i) => {
    const dir = path.join(workDir, String(i));
    cpSync(path.join(repoRoot, f.dir), dir, { recursive: true });
    copies.push({ dir, files: f.files, originals: new Map(f.files.map((name) => [name, readFileSync(path.join(dir, name), 'utf8')])) });
  });
});
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

interface Prepared {
  readonly endpointsXml: string;
  readonly target: string;
  readonly restore: () => void;
}

/** Writes the case's mutated file into its fixture copy; `restore` puts the original back. */
function prepare(c: { fixture: number; file: number; mutations: readonly Mutation[]; bytes: readonly ByteMutation[] }): Prepared {
  const copy = copies[c.fixture]!;
  const name = copy.files[c.file % copy.files.length]!;
  const original = copy.originals.get(name)!;
  const mutated = mutateBytes(Buffer.from(mutateXml(original, c.mutations), 'utf8'), c.bytes);
  const target = path.join(copy.dir, name);
  writeFileSync(target, mutated);
  return { endpointsXml: path.join(copy.dir, 'endpoints.xml'), target, restore: () => writeFileSync(target, original) };
}

/** The compiler's contract, whatever the input. */
function checkResult(result: CompileResult): void {
  expect(result.unreadable).toBeNull();
  expect(Array.isArray(result.diagnostics)).toBe(true);
  const errors = result.diagnostics.filter((d) => d.severity === 'error').length;
  expect(result.errorCount).toBe(errors);
  expect(result.warningCount).toBe(result.diagnostics.length - errors);
  // An application comes back exactly when nothing is an error.
  const summary = result.diagnostics.map((d) => `${d.line}:${d.column} ${d.severity} ${d.code} ${d.message.slice(0, 200)}`).join('\n');
  expect(result.application === null, `application ${result.application === null ? 'missing' : 'present'} with:\n${summary}`).toBe(errors > 0);
  for (const d of result.diagnostics) {
    const shown = JSON.stringify(d).slice(0, 500);
    expect(d.severity === 'error' || d.severity === 'warning', shown).toBe(true);
    expect(d.code, shown).toMatch(/^[a-z0-9-]+$/);
    expect(Number.isInteger(d.line) && d.line >= 1, shown).toBe(true);
    expect(Number.isInteger(d.column) && d.column >= 1, shown).toBe(true);
    expect(d.message.trim().length, shown).toBeGreaterThan(0);
    expect(d.message, shown).not.toMatch(STACK_TRACE);
  }
}

describe('compiler fuzzing', () => {
  it(`compileApplication never throws and always returns diagnostics (${IN_PROCESS_RUNS} mutated fixtures)`, () => {
    let changed = 0;
    fc.assert(
      fc.property(caseArb, (c) => {
        const prepared = prepare(c);
        try {
          const result = compileApplication(prepared.endpointsXml, { kinds: TASK_KINDS.list, mode: c.mode, env: {} });
          checkResult(result);
          if (result.errorCount > 0) changed++;
        } finally {
          prepared.restore();
        }
      }),
      { seed: SEED, numRuns: IN_PROCESS_RUNS, endOnFailure: false },
    );
    // The mutations must reach the checks, else this test would prove nothing.
    expect(changed).toBeGreaterThan(IN_PROCESS_RUNS / 4);
  }, 50_000);

  it(`dry-run plans every mutated application that compiles, with hostile parameters, in every format (${PLAN_RUNS} runs)`, () => {
    // Mutations that keep the file valid more often (values, not structure), so that the
    // planner and the simulated request see many applications, not only diagnostics.
    const gentle: fc.Arbitrary<Mutation> = fc.oneof(
      fc.record({ kind: fc.constant('hostile-attribute' as const), at: index, value: index }),
      fc.record({ kind: fc.constant('hostile-text' as const), at: index, value: index }),
      fc.record({ kind: fc.constant('swap-attribute-values' as const), a: index, b: index }),
      fc.record({ kind: fc.constant('duplicate-element' as const), at: index }),
      fc.record({ kind: fc.constant('delete-element' as const), at: index }),
    );
    const value = fc.oneof(fc.constantFrom(...HOSTILE_VALUES, 'a\r\nb', 'x@example.test', 'a@x, b@y', '1', '-3.5'), fc.string({ maxLength: 40 }));
    const planCase = fc.record({
      fixture: fc.nat({ max: FIXTURES.length - 1 }),
      mutations: fc.array(gentle, { maxLength: 2 }),
      values: fc.array(value, { minLength: 1, maxLength: 8 }),
      simulate: fc.boolean(),
    });
    const plain = new Chalk({ level: 0 });
    let planned = 0;
    fc.assert(
      fc.property(planCase, (c) => {
        const prepared = prepare({ fixture: c.fixture, file: 0, mutations: c.mutations, bytes: [] });
        try {
          const result = compileApplication(prepared.endpointsXml, { kinds: TASK_KINDS.list, mode: 'dry-run', env: {} });
          checkResult(result);
          const application = result.application;
          if (application === null) return;
          // Every declared parameter of every endpoint, plus the reserved ones, gets a value.
          const parameters = new Map<string, string[]>();
          let i = 0;
          const next = () => c.values[i++ % c.values.length]!;
          for (const endpoint of application.endpoints) for (const name of endpoint.parametersByName.keys()) parameters.set(name, [next()]);
          parameters.set('environment', [i % 3 === 0 ? 'preview' : next()]);
          parameters.set('hash', [next()]);
          const plan = buildPlan(application, { endpoints: application.endpoints, parameters: c.simulate ? parameters : null, env: {}, kinds: TASK_KINDS });
          for (const text of [formatPlanText(plan, plain), formatPlanJson(plan), formatPlanMermaid(plan), formatPlanDot(plan)])
            expect(typeof text).toBe('string');
          JSON.parse(formatPlanJson(plan));
          planned++;
        } finally {
          prepared.restore();
        }
      }),
      { seed: SEED + 2, numRuns: PLAN_RUNS, endOnFailure: false },
    );
    // Most cases must reach the planner, else this test would prove little.
    expect(planned).toBeGreaterThan(PLAN_RUNS / 4);
  }, 50_000);

  it(`the built validate exits 0 or 1 without a stack trace (${BINARY_RUNS} mutated fixtures)`, async () => {
    assertBuilt();
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const prepared = prepare(c);
        try {
          const r = await run(['validate', '--format', 'json', prepared.endpointsXml], { timeout: 20_000 });
          expect(r.timedOut).toBe(false);
          const output = `exit ${r.exitCode}\n${r.stdout}\n${r.stderr}`.slice(0, 4000);
          expect([0, 1], output).toContain(r.exitCode);
          expect(`${r.stdout}\n${r.stderr}`, output).not.toMatch(STACK_TRACE);
          const report = JSON.parse(r.stdout) as { valid: boolean; errorCount: number };
          expect(report.valid).toBe(r.exitCode === 0);
        } finally {
          prepared.restore();
        }
      }),
      // Another seed than the in-process runs: these are different cases, not repeats.
      { seed: SEED + 1, numRuns: BINARY_RUNS, endOnFailure: true },
    );
  }, 50_000);
});
