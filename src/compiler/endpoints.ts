// <endpoint-folder> and <endpoint>: inherited parameters and separators, responses, tasks and
// the checks that tie them together (references, intermediate values, cycles).

import { HASH_JOINS, type Endpoint, type HashJoin, type ParameterDeclaration, type SuccessResponse, type Task } from './ast.js';
import { declareParameters, SYSTEM } from './parameters.js';
import { type Position } from '../position.js';
import { readElement, requireAttribute, single, type CompileContext, type ReadElement } from './context.js';
import { compileError, compileSuccess, type ResponseScopes, type SuccessDraft } from './responses.js';
import { compileTask, readTaskHeader, type TaskHeader, type TaskKindIndex } from './tasks.js';
import type { ClientGuard, NameScope } from './templates.js';
import type { XmlElement } from './xml.js';
import { endpointProtections, NO_PROTECTIONS, PROTECTION_ELEMENTS, readProtections, type InheritedProtections } from './protections.js';
import { exact } from './retained.js';
import { endpointWebhook, NO_WEBHOOK, readWebhook, WEBHOOK_ELEMENTS, type InheritedWebhook } from './webhooks.js';
import type { Deduplication } from './ast.js';
import { DEDUPLICATION_ELEMENT, readDeduplication } from './deduplication.js';

const ENDPOINT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

export interface Inherited {
  readonly parameters: ReadonlyMap<string, ParameterDeclaration>;
  readonly separator: string;
  /** <honeypot>, <captcha>, <rate-limit> of the folders above; absent: none. */
  readonly protections?: InheritedProtections;
  /** <signature> and <handshake> of the folders above; absent: none. */
  readonly webhook?: InheritedWebhook;
  /** <deduplicate> of the folders above; absent: none. */
  readonly deduplicate?: Deduplication | null;
}

export interface EndpointEnvironment {
  readonly hasSecurity: boolean;
  readonly taskKinds: TaskKindIndex;
}

/** Compiles a folder and everything below it, handing each endpoint to `out` in file order. */
export function compileFolder(
  ctx: CompileContext,
  element: XmlElement,
  inherited: Inherited,
  env: EndpointEnvironment,
  out: (endpoint: Endpoint) => void,
): void {
  const read = readElement(ctx, element, {
    attributes: ['multiple-value-separator'],
    children: ['parameter', 'endpoint-folder', 'endpoint', ...PROTECTION_ELEMENTS, ...WEBHOOK_ELEMENTS, DEDUPLICATION_ELEMENT],
  });
  const parameters = declareParameters(ctx, read.children('parameter'), inherited.parameters);
  const scope: Inherited = {
    parameters,
    separator: separatorOf(ctx, read.attr('multiple-value-separator'), inherited.separator),
    protections: readProtections(ctx, read, inherited.protections ?? NO_PROTECTIONS, parameters),
    webhook: readWebhook(ctx, read, inherited.webhook ?? NO_WEBHOOK),
    deduplicate: readDeduplication(ctx, read, inherited.deduplicate ?? null, parameters),
  };
  for (const child of read.known) {
    if (child.name === 'endpoint-folder') compileFolder(ctx, child, scope, env, out);
    else if (child.name === 'endpoint') {
      const endpoint = compileEndpoint(ctx, child, scope, env);
      if (endpoint) out(endpoint);
    }
  }
}

function separatorOf(ctx: CompileContext, attr: { value: string; position: Position } | undefined, inherited: string): string {
  if (!attr) return inherited;
  if (attr.value === '') {
    ctx.diagnostics.report('invalid-value', attr.position, 'multiple-value-separator', attr.value, 'a non-empty separator such as "||" or ","');
    return inherited;
  }
  return attr.value;
}

const ENDPOINT_SHAPE = {
  attributes: ['name', 'multiple-value-separator', 'tasks'],
  children: ['parameter', 'include-in-hash', 'success', 'error', 'task', ...PROTECTION_ELEMENTS, ...WEBHOOK_ELEMENTS, DEDUPLICATION_ELEMENT],
};

/** The endpoint; null once anything in it was reported as an error (the diagnostics say what). */
function compileEndpoint(ctx: CompileContext, element: XmlElement, inherited: Inherited, env: EndpointEnvironment): Endpoint | null {
  const read = readElement(ctx, element, ENDPOINT_SHAPE);
  const before = ctx.diagnostics.errorCount;
  const name = endpointName(ctx, read);
  const parameters = declareParameters(ctx, read.children('parameter'), inherited.parameters);
  const separator = separatorOf(ctx, read.attr('multiple-value-separator'), inherited.separator);
  const protections = endpointProtections(readProtections(ctx, read, inherited.protections ?? NO_PROTECTIONS, parameters));
  const webhook = endpointWebhook(readWebhook(ctx, read, inherited.webhook ?? NO_WEBHOOK));
  const deduplicate = readDeduplication(ctx, read, inherited.deduplicate ?? null, parameters);
  const tasksMode = readTasksMode(ctx, read);
  const declared = declareTasks(ctx, env.taskKinds, read.children('task'), parameters);
  const { tasks, keepsRequestBody } = compileTasks(ctx, env.taskKinds, declared, parameters, clientGuards(env, protections));
  const taskGraph = buildTaskGraph(ctx, declared);
  const { includeInHash, hashJoin } = readIncludeInHash(ctx, read, parameters, env.hasSecurity);
  const scopes = responseScopes(parameters, declared.produced);
  const successes = compileSuccesses(ctx, read, scopes, declared, name?.value, tasksMode);
  const error = compileError(ctx, single(ctx, read, 'error'), scopes);

  if (!name || ctx.diagnostics.errorCount > before || !error) return null;
  return {
    name: name.value,
    parameters: [...parameters.values()],
    parametersByName: parameters,
    readsHeaders: [...parameters.values()].some((p) => p.source.kind === 'header'),
    readsJsonPaths: [...parameters.values()].some((p) => p.source.kind === 'jsonpath'),
    // Its own tasks here; an endpoint that forwards to one that keeps it too, and one with a <signature> or <handshake>, once all are compiled (compile.ts).
    keepsRequestBody,
    webhook,
    separator,
    tasksMode,
    includeInHash,
    hashJoin,
    // Lists of the AST are copied to their exact size (see compileParts).
    successes: exact(successes),
    error,
    tasks: exact(tasks),
    taskGraph,
    protections,
    deduplicate,
    position: element.position,
  };
}

function endpointName(ctx: CompileContext, read: ReadElement): { value: string; position: Position } | undefined {
  const name = requireAttribute(ctx, read, 'name');
  if (!name) return undefined;
  if (!ENDPOINT_NAME.test(name.value)) ctx.diagnostics.report('invalid-endpoint-name', name.position, name.value);
  ctx.endpointNames.push({ name: name.value, position: name.position });
  return name;
}

function readTasksMode(ctx: CompileContext, read: ReadElement): Endpoint['tasksMode'] {
  const attr = read.attr('tasks');
  if (!attr) return 'wait';
  if (attr.value === 'wait' || attr.value === 'background') return attr.value;
  ctx.diagnostics.report('invalid-value', attr.position, 'tasks', attr.value, '"wait" or "background"');
  return 'wait';
}

/** What keeps any client from using the endpoint freely, for recipient-from-request. */
function clientGuards(env: EndpointEnvironment, protections: Endpoint['protections']): ClientGuard[] {
  const guards: ClientGuard[] = env.hasSecurity ? ['hash'] : [];
  if (protections?.captcha) guards.push('captcha');
  if (protections !== null && (protections.limitsByClient.length > 0 || protections.limitsByParameter.length > 0)) guards.push('rate-limit');
  return guards;
}

/**
 * The endpoint's tasks as their headers declare them (ids, the intermediate values each takes
 * and produces): what a reference to a task or an intermediate value, in a task or a <success>,
 * is checked against.
 */
interface DeclaredTasks {
  readonly headers: readonly TaskHeader[];
  readonly ids: ReadonlyMap<string, TaskHeader>;
  /** Each intermediate value with the task that produces it. */
  readonly producers: ReadonlyMap<string, { readonly task: string; readonly position: Position }>;
  readonly produced: ReadonlySet<string>;
  /**
   * Ids and outputs of the tasks already reported for their class: references to them are not
   * reported again (no follow-on problems of an unknown element).
   */
  readonly brokenIds: ReadonlySet<string>;
  readonly brokenOutputs: ReadonlySet<string>;
}

function declareTasks(
  ctx: CompileContext,
  kinds: TaskKindIndex,
  elements: readonly XmlElement[],
  parameters: ReadonlyMap<string, ParameterDeclaration>,
): DeclaredTasks {
  const headers: TaskHeader[] = [];
  const brokenIds = new Set<string>();
  const brokenOutputs = new Set<string>();
  elements.forEach((t, i) => {
    const h = readTaskHeader(ctx, kinds, t, i);
    if (h) headers.push(h);
    else {
      brokenIds.add(t.attributes.find((a) => a.name === 'id')?.value ?? `task-${i + 1}`);
      for (const o of t.children) {
        const name = o.kind === 'element' && o.name === 'output-intermediate-value' ? o.attributes.find((a) => a.name === 'name') : undefined;
        if (name) brokenOutputs.add(name.value);
      }
    }
  });
  const ids = new Map<string, TaskHeader>();
  for (const h of headers) {
    const first = ids.get(h.id);
    if (first) ctx.diagnostics.report('duplicate-task-id', h.idPosition, h.id, first.idPosition.line);
    else ids.set(h.id, h);
  }
  const producers = producersOf(ctx, headers, parameters);
  return { headers, ids, producers, produced: new Set(producers.keys()), brokenIds, brokenOutputs };
}

function producersOf(
  ctx: CompileContext,
  headers: readonly TaskHeader[],
  parameters: ReadonlyMap<string, ParameterDeclaration>,
): Map<string, { task: string; position: Position }> {
  const producers = new Map<string, { task: string; position: Position }>();
  for (const h of headers) {
    for (const o of h.outputs) {
      const first = producers.get(o.name);
      if (first) ctx.diagnostics.report('intermediate-value-produced-twice', o.position, o.name, first.position.line);
      else producers.set(o.name, { task: h.id, position: o.position });
      if (parameters.has(o.name) || SYSTEM.has(o.name)) ctx.diagnostics.report('intermediate-value-shadows-parameter', o.position, o.name);
    }
  }
  return producers;
}

function checkAfter(ctx: CompileContext, declared: DeclaredTasks, refs: readonly { id: string; position: Position }[]): void {
  for (const ref of refs) {
    if (!declared.ids.has(ref.id) && !declared.brokenIds.has(ref.id))
      ctx.diagnostics.report('unknown-task', ref.position, ref.id, ctx.suggestions.closest(ref.id, declared.ids.keys()));
  }
}

function checkInputs(ctx: CompileContext, declared: DeclaredTasks, refs: readonly { name: string; position: Position }[]): void {
  for (const ref of refs) {
    if (!declared.producers.has(ref.name) && !declared.brokenOutputs.has(ref.name))
      ctx.diagnostics.report('intermediate-value-not-produced', ref.position, ref.name, ctx.suggestions.closest(ref.name, declared.produced));
  }
}

function compileTasks(
  ctx: CompileContext,
  kinds: TaskKindIndex,
  declared: DeclaredTasks,
  parameters: ReadonlyMap<string, ParameterDeclaration>,
  clientGuards: readonly ClientGuard[],
): { tasks: Task[]; keepsRequestBody: boolean } {
  const tasks: Task[] = [];
  let keepsRequestBody = false;
  for (const h of declared.headers) {
    checkAfter(ctx, declared, h.after);
    checkInputs(ctx, declared, h.inputs);
    const scope: NameScope = {
      parameters,
      inputs: new Set(h.inputs.map((i) => i.name)),
      produced: declared.produced,
      errorAction: false,
      envOnly: false,
      where: `in task "${h.id}"`,
      task: true,
      clientGuards,
    };
    const task = compileTask(ctx, kinds, h, scope);
    if (task) {
      tasks.push(task);
      if (h.kind.readsRequestBody?.(task) === true) keepsRequestBody = true;
    }
  }
  return { tasks, keepsRequestBody };
}

function buildTaskGraph(ctx: CompileContext, declared: DeclaredTasks): Endpoint['taskGraph'] {
  const graph = ctx.graphs.of(
    declared.headers.map((h) => ({
      id: h.id,
      after: h.after.map((a) => a.id),
      inputs: h.inputs.map((i) => i.name),
      outputs: h.outputs.map((o) => o.name),
    })),
  );
  for (const cycle of graph.cycles) {
    const at = declared.ids.get(cycle[0]!)!.element.position;
    ctx.diagnostics.report('task-cycle', at, cycle.join(' -> '));
  }
  return graph;
}

function readIncludeInHash(
  ctx: CompileContext,
  read: ReadElement,
  parameters: ReadonlyMap<string, ParameterDeclaration>,
  hasSecurity: boolean,
): Pick<Endpoint, 'includeInHash' | 'hashJoin'> {
  const hashElement = single(ctx, read, 'include-in-hash');
  if (!hashElement) return { includeInHash: null, hashJoin: 'concatenated' };
  const r = readElement(ctx, hashElement, { attributes: ['join'], children: ['parameter'] });
  const hashJoin = readHashJoin(ctx, r);
  const includeInHash: string[] = [];
  for (const p of r.children('parameter')) {
    const pr = readElement(ctx, p, { attributes: ['name'], children: [] });
    const n = requireAttribute(ctx, pr, 'name');
    if (!n) continue;
    if (!parameters.has(n.value)) ctx.diagnostics.report('unknown-hash-parameter', n.position, n.value, ctx.suggestions.closest(n.value, parameters.keys()));
    else includeInHash.push(n.value);
  }
  if (!hasSecurity) ctx.diagnostics.report('hash-without-security', hashElement.position);
  return { includeInHash, hashJoin };
}

function readHashJoin(ctx: CompileContext, read: ReadElement): HashJoin {
  const attr = read.attr('join');
  if (!attr) return 'concatenated';
  if ((HASH_JOINS as readonly string[]).includes(attr.value)) return attr.value as HashJoin;
  ctx.diagnostics.report('invalid-value', attr.position, 'join', attr.value, HASH_JOINS.map((j) => `"${j}"`).join(' or '));
  return 'concatenated';
}

function responseScopes(parameters: ReadonlyMap<string, ParameterDeclaration>, produced: ReadonlySet<string>): ResponseScopes {
  return {
    success: (inputs) => ({
      parameters,
      inputs,
      produced,
      errorAction: false,
      envOnly: false,
      where: 'in this <success>',
    }),
    error: { parameters: new Map(), inputs: new Set(), produced: new Set(), errorAction: true, envOnly: false, where: 'in <error>' },
  };
}

function compileSuccesses(
  ctx: CompileContext,
  read: ReadElement,
  scopes: ResponseScopes,
  declared: DeclaredTasks,
  endpoint: string | undefined,
  tasksMode: Endpoint['tasksMode'],
): SuccessResponse[] {
  const successes: SuccessResponse[] = [];
  let unconditionalLine: number | null = null;
  for (const s of read.children('success')) {
    if (unconditionalLine !== null) ctx.diagnostics.report('unreachable-success', s.position, unconditionalLine);
    const draft = compileSuccess(ctx, s, scopes);
    const hasCondition = s.attributes.some((a) => a.name === 'if');
    if (!hasCondition && unconditionalLine === null) unconditionalLine = s.position.line;
    if (!draft) continue;
    const action = draft.response.action;
    if (action.kind === 'forward' && endpoint !== undefined) ctx.forwards.push({ from: endpoint, target: action.endpoint, position: action.position });
    successes.push(successResponse(ctx, s, draft, declared, tasksMode));
  }
  return successes;
}

/** A compiled <success> with what it waits for among the endpoint's tasks. */
function successResponse(
  ctx: CompileContext,
  element: XmlElement,
  draft: SuccessDraft,
  declared: DeclaredTasks,
  tasksMode: Endpoint['tasksMode'],
): SuccessResponse {
  checkAfter(ctx, declared, draft.afterRefs);
  checkInputs(ctx, declared, draft.inputRefs);
  if ((draft.afterRefs.length > 0 || draft.inputRefs.length > 0) && tasksMode === 'background') {
    ctx.diagnostics.report('success-waits-in-background', element.position);
  }
  const r = draft.response;
  const waitsFor = new Set(r.after.filter((id) => declared.ids.has(id)));
  for (const input of r.inputs) {
    const p = declared.producers.get(input);
    if (p) waitsFor.add(p.task);
  }
  // Built after the tasks only when it needs them; tasks="background" with after/inputs is an error above.
  const deferred = tasksMode === 'wait' && declared.headers.length > 0 && (waitsFor.size > 0 || r.inputs.length > 0);
  return { condition: r.condition, action: r.action, after: [...waitsFor], inputs: r.inputs, deferred, position: r.position };
}
