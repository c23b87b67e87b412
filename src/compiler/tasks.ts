// <task>: what every kind shares (class, id, condition, ignore-if-error, timeout, retries,
// after, inputs, outputs). The class picks a kind from the registry the command handed in, and
// the kind compiles its own elements (src/tasks/<kind>/compile.ts).

import { createRequire } from 'node:module';
import type { Position } from '../position.js';
import { DEFAULT_TASK_TIMEOUT_MS, durationExpectation, parseDuration } from '../units.js';
import type { OutputIntermediateValue, Task } from './ast.js';
import { CONDITION_ATTRIBUTES, compileCondition } from './conditions.js';
import {
  parseBooleanAttribute,
  readElement,
  requireAttribute,
  UNSUPPORTED_INSTEAD,
  type CompileContext,
  type ElementShape,
  type ReadElement,
} from './context.js';
import type { TaskKindSyntax } from './task-kind.js';
import type { NameScope } from './templates.js';
import type { XmlElement } from './xml.js';
import { authorJsonPath, type JsonPathQuery } from './json-path.js';
import { exact } from './retained.js';
import { authorRegex, type AuthorRegex } from './regex.js';

/** OpenEndpoints task classes recognised and refused by name (with or without the endpoints.task. prefix). */
export const UNSUPPORTED_CLASSES: ReadonlySet<string> = new Set(['CreateShortLinkToEndpointTask', 'RequestLogExpressionCaptureTask']);
const TASK_ATTRIBUTES = ['class', 'id', ...CONDITION_ATTRIBUTES, 'ignore-if-error', 'timeout', 'retries'];
const COMMON_CHILDREN = ['after', 'input-intermediate-value', 'output-intermediate-value'];
const AFTER_SHAPE: ElementShape = { attributes: ['task-id'], children: [] };
const INPUT_SHAPE: ElementShape = { attributes: ['name'], children: [] };

/** The registry as the compiler reads it: kinds by class name, with the element shape of each. */
export class TaskKindIndex {
  private readonly byClass = new Map<string, { kind: TaskKindSyntax; shape: ElementShape }>();
  /** Every class name, for "did you mean". */
  readonly classNames: readonly string[];
  /** For messages: each kind's first class name, and the others. */
  readonly names: { readonly short: readonly string[]; readonly long: readonly string[] };
  /** The kinds that may output intermediate values, by their first class name, for messages. */
  readonly withOutputs: readonly string[];
  /** Every class name of a kind that sends mail. */
  readonly mailClasses: ReadonlySet<string>;

  constructor(kinds: readonly TaskKindSyntax[]) {
    for (const kind of kinds) {
      const shape: ElementShape = { attributes: TASK_ATTRIBUTES, children: [...COMMON_CHILDREN, ...kind.children] };
      for (const name of kind.classNames) this.byClass.set(name, { kind, shape });
    }
    this.classNames = [...this.byClass.keys()];
    this.names = { short: kinds.map((k) => k.classNames[0]!), long: kinds.flatMap((k) => k.classNames.slice(1)) };
    this.withOutputs = kinds.filter((k) => k.hasOutputs).map((k) => k.classNames[0]!);
    this.mailClasses = new Set(kinds.filter((k) => k.sendsMail).flatMap((k) => k.classNames));
  }

  get(className: string): { readonly kind: TaskKindSyntax; readonly shape: ElementShape } | undefined {
    return this.byClass.get(className);
  }
}

/**
 * A task of a kind: the shared fields written out in one fixed order, then the kind's own. A
 * spread of `base` costs several times more per task (docs/performance.md, "The compiler's
 * allocations"), and a large application has tens of thousands of tasks.
 */
export function taskWith<F extends object>(base: Task, own: F): Task & F {
  const task = {
    kind: base.kind,
    id: base.id,
    explicitId: base.explicitId,
    className: base.className,
    condition: base.condition,
    ignoreIfError: base.ignoreIfError,
    timeoutMs: base.timeoutMs,
    retries: base.retries,
    after: base.after,
    inputs: base.inputs,
    outputs: base.outputs,
    position: base.position,
  };
  return Object.assign(task, own);
}

/** What the first pass learns of a task: enough to resolve names across the endpoint. */
export interface TaskHeader {
  readonly element: XmlElement;
  readonly read: ReadElement;
  readonly kind: TaskKindSyntax;
  readonly id: string;
  readonly explicitId: boolean;
  readonly idPosition: Position;
  readonly after: readonly { id: string; position: Position }[];
  readonly inputs: readonly { name: string; position: Position }[];
  readonly outputs: readonly { name: string; position: Position; element: XmlElement }[];
}

/** First pass: class, id, after, inputs, outputs. null when the class is unknown or unsupported (reported; nothing inside is checked). */
export function readTaskHeader(ctx: CompileContext, kinds: TaskKindIndex, element: XmlElement, index: number): TaskHeader | null {
  const classAttr = element.attributes.find((a) => a.name === 'class');
  if (!classAttr) {
    ctx.diagnostics.report('missing-attribute', element.position, 'class', 'task');
    return null;
  }
  const entry = kinds.get(classAttr.value);
  if (!entry) {
    const bare = classAttr.value.replace(/^endpoints\.task\./, '');
    if (UNSUPPORTED_CLASSES.has(bare))
      ctx.diagnostics.report('unsupported-feature', classAttr.position, `The task class ${classAttr.value}`, UNSUPPORTED_INSTEAD[bare] ?? null);
    else
      ctx.diagnostics.report(
        'unknown-task-class',
        classAttr.position,
        classAttr.value,
        kinds.names,
        ctx.suggestions.closest(classAttr.value, kinds.classNames),
      );
    return null;
  }
  const read = readElement(ctx, element, entry.shape);
  const idAttr = read.attr('id');
  if (idAttr && !/^[A-Za-z0-9_.-]+$/.test(idAttr.value)) {
    ctx.diagnostics.report('invalid-value', idAttr.position, 'the task id', idAttr.value, 'letters, digits, "_", "." and "-"');
  }
  // Loops rather than flatMap: this runs for every task of the application.
  const after: { id: string; position: Position }[] = [];
  for (const a of read.children('after')) {
    const id = requireAttribute(ctx, readElement(ctx, a, AFTER_SHAPE), 'task-id');
    if (id) after.push({ id: id.value, position: a.position });
  }
  const inputs: { name: string; position: Position }[] = [];
  for (const i of read.children('input-intermediate-value')) {
    const name = requireAttribute(ctx, readElement(ctx, i, INPUT_SHAPE), 'name');
    if (name) inputs.push({ name: name.value, position: i.position });
  }
  const outputs: { name: string; position: Position; element: XmlElement }[] = [];
  for (const o of read.children('output-intermediate-value')) {
    const name = o.attributes.find((a) => a.name === 'name');
    if (name) outputs.push({ name: name.value, position: o.position, element: o });
    else ctx.diagnostics.report('missing-attribute', o.position, 'name', o.name);
  }
  return {
    element,
    read,
    kind: entry.kind,
    id: idAttr?.value ?? `task-${index + 1}`,
    explicitId: idAttr !== undefined,
    idPosition: idAttr?.position ?? element.position,
    after,
    inputs,
    outputs,
  };
}

/** Second pass: the whole task, with names resolved in `scope`. null when invalid (reported). */
export function compileTask(ctx: CompileContext, kinds: TaskKindIndex, header: TaskHeader, scope: NameScope): Task | null {
  const { read } = header;
  const condition = compileCondition(ctx, read, scope);
  const ignoreIfError = parseBooleanAttribute(ctx, read.attr('ignore-if-error'), 'task') ?? false;
  let ok = condition !== undefined;

  let timeoutMs = DEFAULT_TASK_TIMEOUT_MS;
  const timeoutAttr = read.attr('timeout');
  if (timeoutAttr) {
    const parsed = parseDuration(timeoutAttr.value);
    if (parsed === null) {
      ctx.diagnostics.report('invalid-value', timeoutAttr.position, 'timeout', timeoutAttr.value, durationExpectation(timeoutAttr.value));
      ok = false;
    } else timeoutMs = parsed;
  }
  let retries = 0;
  const retriesAttr = read.attr('retries');
  if (retriesAttr) {
    if (!/^\d{1,2}$/.test(retriesAttr.value)) {
      ctx.diagnostics.report('invalid-value', retriesAttr.position, 'retries', retriesAttr.value, 'a whole number from 0 to 99');
      ok = false;
    } else retries = Number(retriesAttr.value);
  }
  const outputs: OutputIntermediateValue[] = [];
  if (header.outputs.length > 0) {
    if (!header.kind.hasOutputs) {
      ctx.diagnostics.report('email-output', header.outputs[0]!.position, header.kind.classNames[0]!, kinds.withOutputs);
      ok = false;
    } else {
      if (condition) ctx.diagnostics.report('output-on-optional-task', read.attr('if')!.position, 'a condition');
      else if (ignoreIfError) ctx.diagnostics.report('output-on-optional-task', read.attr('ignore-if-error')!.position, 'ignore-if-error="true"');
      for (const o of header.outputs) {
        const output = compileOutput(ctx, o.element);
        if (output) outputs.push(output);
        else ok = false;
      }
    }
  }
  const base: Task = {
    kind: header.kind.kind,
    id: header.id,
    explicitId: header.explicitId,
    className: read.attr('class')!.value,
    condition: condition ?? null,
    ignoreIfError,
    timeoutMs,
    retries,
    // Lists of the AST are kept at their exact size, empty ones shared (see retained.ts).
    after: exact(header.after.map((a) => a.id)),
    inputs: exact(header.inputs.map((i) => i.name)),
    outputs: exact(outputs),
    position: header.element.position,
  };
  const task = header.kind.compile(ctx, read, scope, base, header.element);
  return ok ? task : null;
}

// Loaded on the first <output-intermediate-value xpath>: most applications read JSON answers,
// and loading the XPath library is a noticeable share of validate's start-up.
let xpathModule: { parse(expression: string): unknown } | null = null;
function xpathParser(): { parse(expression: string): unknown } {
  xpathModule ??= createRequire(import.meta.url)('xpath') as { parse(expression: string): unknown };
  return xpathModule;
}

function compileOutput(ctx: CompileContext, element: XmlElement): OutputIntermediateValue | null {
  const r = readElement(ctx, element, { attributes: ['name', 'jsonpath', 'xpath', 'regex'], children: [] });
  const name = r.attr('name')!;
  const jsonpath = r.attr('jsonpath');
  const xp = r.attr('xpath');
  if ((jsonpath ? 1 : 0) + (xp ? 1 : 0) !== 1) {
    ctx.diagnostics.report('invalid-output', element.position, 'give exactly one of "jsonpath" or "xpath"');
    return null;
  }
  let ok = true;
  let query: JsonPathQuery | null = null;
  if (jsonpath) {
    query = authorJsonPath(ctx, jsonpath);
    if (query === null) ok = false;
  }
  if (xp) {
    try {
      xpathParser().parse(xp.value);
    } catch (error) {
      ctx.diagnostics.report('invalid-xpath', xp.position, xp.value, (error as Error).message);
      ok = false;
    }
  }
  let regex: AuthorRegex | null = null;
  const re = r.attr('regex');
  if (re) {
    regex = authorRegex(ctx, re);
    if (regex === null) ok = false;
  }
  if (!ok) return null;
  return {
    name: name.value,
    selector: jsonpath ? { kind: 'jsonpath', path: jsonpath.value, query: query! } : { kind: 'xpath', path: xp!.value },
    regex,
  };
}
