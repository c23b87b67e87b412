// <endpoint-folder> and <endpoint>: inherited parameters and separators, responses, tasks and
// the checks that tie them together (references, intermediate values, cycles).

import {
  HASH_JOINS,
  type Endpoint,
  type HashJoin,
  type ParameterDeclaration,
  type ParameterFormat,
  type ParameterRules,
  type SuccessResponse,
  type Task,
} from './ast.js';
import { BY_NAME, parameterSource } from './parameter-sources.js';
import { PARAMETER_FORMATS, ruleViolation } from './parameter-rules.js';
import { SYSTEM_PARAMETERS } from '../template/types.js';
import { type Position } from '../position.js';
import { readElement, requireAttribute, single, type CompileContext, type ReadElement } from './context.js';
import { compileError, compileSuccess, type ResponseScopes } from './responses.js';
import { compileTask, readTaskHeader, type TaskHeader, type TaskKindIndex } from './tasks.js';
import type { ClientGuard, NameScope } from './templates.js';
import type { XmlElement } from './xml.js';
import { endpointProtections, NO_PROTECTIONS, PROTECTION_ELEMENTS, readProtections, type InheritedProtections } from './protections.js';
import { exact } from './retained.js';
import { authorRegex } from './regex.js';
import { endpointWebhook, NO_WEBHOOK, readWebhook, WEBHOOK_ELEMENTS, type InheritedWebhook } from './webhooks.js';
import type { Deduplication } from './ast.js';
import { DEDUPLICATION_ELEMENT, readDeduplication } from './deduplication.js';

const ENDPOINT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const PARAMETER_NAME = /^[A-Za-z0-9_.-]+$/;
const SYSTEM: ReadonlySet<string> = new Set(SYSTEM_PARAMETERS);

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

function declareParameters(
  ctx: CompileContext,
  elements: readonly XmlElement[],
  inherited: ReadonlyMap<string, ParameterDeclaration>,
): Map<string, ParameterDeclaration> {
  const merged = new Map(inherited);
  const here = new Map<string, ParameterDeclaration>();
  for (const el of elements) {
    const r = readElement(ctx, el, PARAMETER_SHAPE);
    const name = requireAttribute(ctx, r, 'name');
    if (!name) continue;
    if (!PARAMETER_NAME.test(name.value)) {
      ctx.diagnostics.report('invalid-parameter-name', name.position, name.value);
      continue;
    }
    const first = here.get(name.value);
    if (first) {
      ctx.diagnostics.report('duplicate-parameter', el.position, name.value, first.position.line);
      continue;
    }
    const def = r.attr('default-value');
    if (def?.value.includes('${')) ctx.diagnostics.report('placeholder-not-allowed', def.position, 'default-value (it is a literal)');
    if (SYSTEM.has(name.value)) ctx.diagnostics.report('parameter-shadows-system', name.position, name.value);
    // A bad source is reported; read by name meanwhile, so its uses are not reported as well.
    const source = parameterSource(ctx, r) ?? BY_NAME;
    const compiled = compileRules(ctx, r);
    if (!compiled.ok) continue;
    const { rules } = compiled;
    if (rules !== null && def !== undefined && def.value !== '') {
      const violation = ruleViolation(rules, def.value);
      if (violation !== null) ctx.diagnostics.report('invalid-default-value', def.position, name.value, violation);
    }
    const declaration: ParameterDeclaration = { name: name.value, source, defaultValue: def?.value ?? null, rules, position: el.position };
    here.set(name.value, declaration);
    // Re-inserting moves an overridden parameter to its new place in declaration order.
    merged.delete(name.value);
    merged.set(name.value, declaration);
  }
  return merged;
}

const PARAMETER_SHAPE = { attributes: ['name', 'jsonpath', 'header', 'default-value', 'pattern', 'max-length', 'format'], children: [] };

/** The input rules of a <parameter> (null: it has none), or not ok after a bad one was reported. */
type CompiledRules = { readonly ok: true; readonly rules: ParameterRules | null } | { readonly ok: false };

function compileRules(ctx: CompileContext, read: ReadElement): CompiledRules {
  const patternAttr = read.attr('pattern');
  const maxLengthAttr = read.attr('max-length');
  const formatAttr = read.attr('format');
  if (!patternAttr && !maxLengthAttr && !formatAttr) return { ok: true, rules: null };
  let ok = true;
  let pattern: ParameterRules['pattern'] = null;
  if (patternAttr) {
    pattern = authorRegex(ctx, patternAttr);
    ok = pattern !== null;
  }
  let maxLength: number | null = null;
  if (maxLengthAttr) {
    if (!/^[1-9]\d{0,8}$/.test(maxLengthAttr.value)) {
      ctx.diagnostics.report('invalid-value', maxLengthAttr.position, 'max-length', maxLengthAttr.value, 'a whole number greater than 0');
      ok = false;
    } else maxLength = Number(maxLengthAttr.value);
  }
  let format: ParameterFormat | null = null;
  if (formatAttr) {
    if (!(PARAMETER_FORMATS as readonly string[]).includes(formatAttr.value)) {
      const suggestion = ctx.suggestions.closest(formatAttr.value, PARAMETER_FORMATS);
      ctx.diagnostics.report(
        'invalid-value',
        formatAttr.position,
        'format',
        formatAttr.value,
        `${PARAMETER_FORMATS.map((f) => `"${f}"`).join(', ')}${suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`}`,
      );
      ok = false;
    } else format = formatAttr.value as ParameterFormat;
  }
  return ok ? { ok: true, rules: { pattern, maxLength, format } } : { ok: false };
}

function compileEndpoint(ctx: CompileContext, element: XmlElement, inherited: Inherited, env: EndpointEnvironment): Endpoint | null {
  const read = readElement(ctx, element, {
    attributes: ['name', 'multiple-value-separator', 'tasks'],
    children: ['parameter', 'include-in-hash', 'success', 'error', 'task', ...PROTECTION_ELEMENTS, ...WEBHOOK_ELEMENTS, DEDUPLICATION_ELEMENT],
  });
  const before = ctx.diagnostics.errorCount;
  const nameAttr = requireAttribute(ctx, read, 'name');
  if (nameAttr && !ENDPOINT_NAME.test(nameAttr.value)) ctx.diagnostics.report('invalid-endpoint-name', nameAttr.position, nameAttr.value);
  if (nameAttr) ctx.endpointNames.push({ name: nameAttr.value, position: nameAttr.position });
  const parameters = declareParameters(ctx, read.children('parameter'), inherited.parameters);
  const separator = separatorOf(ctx, read.attr('multiple-value-separator'), inherited.separator);
  const protections = endpointProtections(readProtections(ctx, read, inherited.protections ?? NO_PROTECTIONS, parameters));
  const webhook = endpointWebhook(readWebhook(ctx, read, inherited.webhook ?? NO_WEBHOOK));
  const deduplicate = readDeduplication(ctx, read, inherited.deduplicate ?? null, parameters);
  // What keeps any client from using the endpoint freely, for recipient-from-request.
  const clientGuards: ClientGuard[] = env.hasSecurity ? ['hash'] : [];
  if (protections?.captcha) clientGuards.push('captcha');
  if (protections !== null && (protections.limitsByClient.length > 0 || protections.limitsByParameter.length > 0)) clientGuards.push('rate-limit');
  const tasksAttr = read.attr('tasks');
  let tasksMode: Endpoint['tasksMode'] = 'wait';
  if (tasksAttr) {
    if (tasksAttr.value === 'wait' || tasksAttr.value === 'background') tasksMode = tasksAttr.value;
    else ctx.diagnostics.report('invalid-value', tasksAttr.position, 'tasks', tasksAttr.value, '"wait" or "background"');
  }

  // Tasks, first pass: ids and the intermediate values they produce.
  const headers: TaskHeader[] = [];
  const brokenIds = new Set<string>();
  const brokenOutputs = new Set<string>();
  read.children('task').forEach((t, i) => {
    const h = readTaskHeader(ctx, env.taskKinds, t, i);
    if (h) headers.push(h);
    else {
      // A task already reported for its class still has an id and outputs: references to
      // them are not reported again (no follow-on problems of an unknown element).
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
  const producers = new Map<string, { task: string; position: Position }>();
  for (const h of headers) {
    for (const o of h.outputs) {
      const first = producers.get(o.name);
      if (first) ctx.diagnostics.report('intermediate-value-produced-twice', o.position, o.name, first.position.line);
      else producers.set(o.name, { task: h.id, position: o.position });
      if (parameters.has(o.name) || SYSTEM.has(o.name)) ctx.diagnostics.report('intermediate-value-shadows-parameter', o.position, o.name);
    }
  }
  const produced = new Set(producers.keys());
  const checkAfter = (refs: readonly { id: string; position: Position }[]) => {
    for (const ref of refs)
      if (!ids.has(ref.id) && !brokenIds.has(ref.id)) ctx.diagnostics.report('unknown-task', ref.position, ref.id, ctx.suggestions.closest(ref.id, ids.keys()));
  };
  const checkInputs = (refs: readonly { name: string; position: Position }[]) => {
    for (const ref of refs) {
      if (!producers.has(ref.name) && !brokenOutputs.has(ref.name))
        ctx.diagnostics.report('intermediate-value-not-produced', ref.position, ref.name, ctx.suggestions.closest(ref.name, produced));
    }
  };

  // Tasks, second pass.
  const tasks: Task[] = [];
  let keepsRequestBody = false;
  for (const h of headers) {
    checkAfter(h.after);
    checkInputs(h.inputs);
    const scope: NameScope = {
      parameters,
      inputs: new Set(h.inputs.map((i) => i.name)),
      produced,
      errorAction: false,
      envOnly: false,
      where: `in task "${h.id}"`,
      task: true,
      clientGuards,
    };
    const task = compileTask(ctx, env.taskKinds, h, scope);
    if (task) {
      tasks.push(task);
      if (h.kind.readsRequestBody?.(task) === true) keepsRequestBody = true;
    }
  }

  const graph = ctx.graphs.of(
    headers.map((h) => ({
      id: h.id,
      after: h.after.map((a) => a.id),
      inputs: h.inputs.map((i) => i.name),
      outputs: h.outputs.map((o) => o.name),
    })),
  );
  for (const cycle of graph.cycles) {
    const at = ids.get(cycle[0]!)!.element.position;
    ctx.diagnostics.report('task-cycle', at, cycle.join(' -> '));
  }

  // Hash.
  let includeInHash: string[] | null = null;
  let hashJoin: HashJoin = 'concatenated';
  const hashElement = single(ctx, read, 'include-in-hash');
  if (hashElement) {
    const r = readElement(ctx, hashElement, { attributes: ['join'], children: ['parameter'] });
    const joinAttr = r.attr('join');
    if (joinAttr) {
      if ((HASH_JOINS as readonly string[]).includes(joinAttr.value)) hashJoin = joinAttr.value as HashJoin;
      else ctx.diagnostics.report('invalid-value', joinAttr.position, 'join', joinAttr.value, HASH_JOINS.map((j) => `"${j}"`).join(' or '));
    }
    includeInHash = [];
    for (const p of r.children('parameter')) {
      const pr = readElement(ctx, p, { attributes: ['name'], children: [] });
      const n = requireAttribute(ctx, pr, 'name');
      if (!n) continue;
      if (!parameters.has(n.value)) ctx.diagnostics.report('unknown-hash-parameter', n.position, n.value, ctx.suggestions.closest(n.value, parameters.keys()));
      else includeInHash.push(n.value);
    }
    if (!env.hasSecurity) ctx.diagnostics.report('hash-without-security', hashElement.position);
  }

  // Responses.
  const scopes: ResponseScopes = {
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
  const successes: SuccessResponse[] = [];
  let unconditionalLine: number | null = null;
  for (const s of read.children('success')) {
    if (unconditionalLine !== null) ctx.diagnostics.report('unreachable-success', s.position, unconditionalLine);
    const draft = compileSuccess(ctx, s, scopes);
    const hasCondition = s.attributes.some((a) => a.name === 'if');
    if (!hasCondition && unconditionalLine === null) unconditionalLine = s.position.line;
    if (!draft) continue;
    const action = draft.response.action;
    if (action.kind === 'forward' && nameAttr) ctx.forwards.push({ from: nameAttr.value, target: action.endpoint, position: action.position });
    checkAfter(draft.afterRefs);
    checkInputs(draft.inputRefs);
    if ((draft.afterRefs.length > 0 || draft.inputRefs.length > 0) && tasksMode === 'background') {
      ctx.diagnostics.report('success-waits-in-background', s.position);
    }
    const waitsFor = new Set(draft.response.after.filter((id) => ids.has(id)));
    for (const input of draft.response.inputs) {
      const p = producers.get(input);
      if (p) waitsFor.add(p.task);
    }
    const r = draft.response;
    // Built after the tasks only when it needs them; tasks="background" with after/inputs is an error above.
    const deferred = tasksMode === 'wait' && headers.length > 0 && (waitsFor.size > 0 || r.inputs.length > 0);
    successes.push({ condition: r.condition, action: r.action, after: [...waitsFor], inputs: r.inputs, deferred, position: r.position });
  }
  const error = compileError(ctx, single(ctx, read, 'error'), scopes);

  if (!nameAttr || ctx.diagnostics.errorCount > before || !error) return null;
  return {
    name: nameAttr.value,
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
    taskGraph: graph,
    protections,
    deduplicate,
    position: element.position,
  };
}
