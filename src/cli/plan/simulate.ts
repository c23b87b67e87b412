// Builds the dry-run plan from a compiled application and, with --param, simulates one request
// per endpoint with the same binding, success selection, primary-action rules and task
// preparation as serve, stopping short of any I/O.

import { basename } from 'node:path';
import type { Application, EmailAttachment, EmailTask, Endpoint, ErrorAction, HttpRequestTask, SuccessAction, SuccessResponse, Task } from '../../compiler/ast.js';
import type { Condition, Template } from '../../template/types.js';
import { closest } from '../../compiler/suggest.js';
import { bindParameters, parseEnvironment, RESERVED_PARAMETERS, systemValues, type Environment, type RawParameters, type RequestFacts } from '../../runtime/parameters.js';
import { downloadFilenameRefusal, redirectRefusal, selectSuccess } from '../../runtime/primary-rules.js';
import { prepareEmails } from '../../tasks/prepare-email.js';
import { prepareHttpRequest } from '../../tasks/prepare-http-request.js';
import { evaluateCondition } from '../../template/condition.js';
import { expandTemplate, MissingValueError, type ExpansionScope, type PlaceholderPart } from '../../template/expand.js';
import type { EmailPlan, EndpointPlan, Plan, PrimaryFailure, RequestPlan, ResponsePlan, TaskPlan } from './model.js';

/** The request a simulation pretends to receive: fixed so plans are reproducible. */
export const SIMULATED_REQUEST: Omit<RequestFacts, 'environment'> = {
  requestId: 'dry-run',
  clientIp: '127.0.0.1',
  userAgent: 'endpoint-service dry-run',
  baseUrl: 'http://127.0.0.1:8080',
};

export const SECRET_MASK = '***';
export const UPLOADS_LABEL = '<files uploaded with the request>';

export interface PlanOptions {
  /** Endpoints to plan, in the order to print them. */
  readonly endpoints: readonly Endpoint[];
  /** The --param values; null: no simulated request. */
  readonly parameters: RawParameters | null;
  /** What ${env:NAME} reads when a condition or a check needs the real value (never printed). */
  readonly env: Readonly<Record<string, string | undefined>>;
}

export function buildPlan(application: Application, options: PlanOptions): Plan {
  let simulation: Simulation | null = null;
  if (options.parameters !== null) {
    const environment = parseEnvironment(options.parameters);
    simulation = {
      raw: options.parameters,
      environment: environment.ok ? environment.environment : 'live',
      environmentRefusal: environment.ok ? null : environment.detail,
      env: options.env,
    };
  }
  return {
    // The request's hash authenticates it like a password: shown masked, as serve never logs it.
    simulation:
      simulation === null
        ? null
        : {
            parameters: [...simulation.raw.entries()].map(([name, values]) => [name, name === 'hash' ? values.map(() => SECRET_MASK) : values] as [string, string[]]),
            environment: simulation.environment,
          },
    endpoints: options.endpoints.map((e) => planEndpoint(application, e, simulation)),
  };
}

interface Simulation {
  readonly raw: RawParameters;
  readonly environment: Environment;
  /** serve answers a bad `environment` with the <error> action before anything else. */
  readonly environmentRefusal: string | null;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The scopes of one simulated request of one endpoint. */
interface Scopes {
  /** Real values, for conditions and checks; reading an intermediate value throws. */
  readonly real: ExpansionScope;
  /** For printing: env values as `***`, intermediate values as `<from TASK>`, nothing escaped. */
  readonly shown: ExpansionScope;
}

function planEndpoint(application: Application, endpoint: Endpoint, simulation: Simulation | null): EndpointPlan {
  const notes: string[] = [];
  const responses = listResponses(application, endpoint);
  const unconditional = responses.find((r) => r.condition === null)!;
  const base = {
    name: endpoint.name,
    line: endpoint.position.line,
    tasksMode: endpoint.tasksMode,
    responses,
    stages: endpoint.taskGraph.stages,
    edges: endpoint.taskGraph.edges,
  };

  if (simulation === null) {
    return {
      ...base,
      response: unconditional,
      responseChosen: false,
      responseNote: null,
      failure: null,
      tasks: endpoint.tasks.map((t) => planTask(endpoint, t, null, null, application, notes)),
      ignoredParameters: [],
      notes,
    };
  }

  const bound = simulation.environmentRefusal === null ? bindParameters(endpoint, simulation.raw) : null;
  // When binding fails it does not list the ignored names; the rule is the same either way.
  const ignored = bound?.ok === true ? bound.ignored : [...simulation.raw.keys()].filter((n) => !endpoint.parametersByName.has(n) && !RESERVED_PARAMETERS.has(n));
  const ignoredParameters = ignored.map((name) => ({ name, suggestion: closest(name, endpoint.parametersByName.keys()) ?? null }));
  const notRun = (failure: PrimaryFailure, response: ResponsePlan): EndpointPlan => ({
    ...base,
    response,
    responseChosen: false,
    responseNote: null,
    failure,
    tasks: endpoint.tasks.map((t) => planTask(endpoint, t, null, 'the primary action fails, so no task runs', application, notes)),
    ignoredParameters,
    notes,
  });
  // serve checks `environment` first, then binds the parameters; either failure is a 400 answered by <error>.
  const refusal = simulation.environmentRefusal ?? (bound !== null && !bound.ok ? bound.detail : null);
  if (refusal !== null || bound === null || !bound.ok) {
    const failure = { detail: refusal ?? 'the request could not be bound', status: 400, endpoint: endpoint.name };
    return notRun(failure, errorResponse(endpoint, failure.status));
  }

  const scopes = makeScopes(endpoint, bound.parameters, simulation);
  const outcome = simulateResponse(application, endpoint, scopes, simulation, notes, 0);
  if (outcome.failure !== null && outcome.deferred !== true) return notRun(outcome.failure, outcome.response);
  return {
    ...base,
    response: outcome.response,
    responseChosen: outcome.undecided !== true,
    responseNote: outcome.note,
    failure: outcome.failure,
    tasks: endpoint.tasks.map((t) => planTask(endpoint, t, scopes, null, application, notes)),
    ignoredParameters,
    notes,
  };
}

function makeScopes(endpoint: Endpoint, parameters: ReadonlyMap<string, string>, simulation: Simulation): Scopes {
  const producers = new Map<string, string>();
  for (const task of endpoint.tasks) if (task.kind === 'http-request') for (const o of task.outputs) producers.set(o.name, task.id);
  const real: ExpansionScope = {
    parameters,
    system: systemValues(endpoint, { ...SIMULATED_REQUEST, environment: simulation.environment }),
    env: simulation.env,
  };
  const verbatim = (part: PlaceholderPart): string | undefined => {
    if (part.kind === 'env') return SECRET_MASK;
    if (part.kind === 'intermediate') return `<from ${producers.get(part.name) ?? part.name}>`;
    return undefined;
  };
  return { real, shown: { ...real, verbatim } };
}

// ---------------------------------------------------------------------------------------
// Responses

function listResponses(application: Application, endpoint: Endpoint): ResponsePlan[] {
  const list = endpoint.successes.map((s) => describeSuccess(application, endpoint, s, null));
  if (!endpoint.successes.some((s) => s.condition === null)) {
    list.push({ kind: 'empty', status: 200, summary: 'empty', expanded: null, condition: null, line: null, waitsFor: [] });
  }
  return list;
}

function describeSuccess(application: Application, endpoint: Endpoint, success: SuccessResponse, expanded: string | null): ResponsePlan {
  return {
    kind: success.action.kind,
    status: staticStatus(application, success.action, new Set([endpoint.name])),
    summary: summarize(success.action),
    expanded,
    condition: success.condition?.text ?? null,
    line: success.position.line > 0 ? success.position.line : null,
    waitsFor: endpoint.tasksMode === 'wait' ? waitsFor(endpoint, success) : [],
  };
}

function waitsFor(endpoint: Endpoint, success: SuccessResponse): string[] {
  const ids = new Set(success.after);
  for (const input of success.inputs) {
    for (const task of endpoint.tasks) if (task.kind === 'http-request' && task.outputs.some((o) => o.name === input)) ids.add(task.id);
  }
  return [...ids];
}

/** The status known without I/O and without a request: a forward follows its target's fallback. */
function staticStatus(application: Application, action: SuccessAction, visited: Set<string>): number | null {
  switch (action.kind) {
    case 'empty':
    case 'static':
      return 200;
    case 'redirect':
      return 302;
    case 'body':
      return action.status ?? 200;
    case 'url':
      return null;
    case 'forward': {
      const target = application.endpointsByName.get(action.endpoint);
      if (target === undefined || visited.has(target.name)) return null;
      const fallback = target.successes.find((s) => s.condition === null);
      if (fallback === undefined) return 200;
      return staticStatus(application, fallback.action, new Set([...visited, target.name]));
    }
  }
}

function summarize(action: SuccessAction | ErrorAction): string {
  switch (action.kind) {
    case 'empty':
      return 'empty';
    case 'redirect':
      return `redirect to ${action.url.source}` + (action.whitelist.length > 0 ? ` (whitelist: ${action.whitelist.join(', ')})` : '');
    case 'static':
      return `static/${action.filename} (${action.contentType})` + download(action.downloadFilename);
    case 'url':
      return `body of GET ${action.url.source}` + download(action.downloadFilename);
    case 'forward':
      return `forward to endpoint ${action.endpoint}` + (action.inputParameters === null ? '' : ` with ${action.inputParameters.map((p) => `${p.name}=${p.value.source}`).join(', ')}`);
    case 'body':
      return `body (${action.contentType})`;
  }
}

function download(template: Template | null): string {
  return template === null ? '' : `, download as ${template.source}`;
}

interface ResponseOutcome {
  readonly response: ResponsePlan;
  readonly note: string | null;
  readonly failure: PrimaryFailure | null;
  /** The response is built after the tasks (tasks="wait" with after/inputs): they run even when it then fails. */
  readonly deferred?: boolean;
  /** No <success> could be chosen without I/O; `response` is only the fallback. */
  readonly undecided?: boolean;
}

const MAX_FORWARDS = 16;

function simulateResponse(application: Application, endpoint: Endpoint, scopes: Scopes, simulation: Simulation, notes: string[], depth: number): ResponseOutcome {
  let success: SuccessResponse;
  let note: string | null = null;
  try {
    success = selectSuccess(endpoint, scopes.real);
  } catch (error) {
    if (!(error instanceof MissingValueError)) throw error;
    // serve would fail the same way; say so rather than guess.
    const fallback = listResponses(application, endpoint).find((r) => r.condition === null)!;
    return { response: fallback, note: `the response cannot be chosen before the tasks run: ${error.message}`, failure: null, undecided: true };
  }
  const action = success.action;
  const deferred = endpoint.tasksMode === 'wait' && endpoint.tasks.length > 0 && (success.after.length > 0 || success.inputs.length > 0);
  const fail = (detail: string): ResponseOutcome => {
    const failure = { detail, status: 400, endpoint: endpoint.name };
    return { response: errorResponse(endpoint, failure.status), note: null, failure, deferred };
  };

  // Checks need real values; a value only a task can produce is checked when serve runs.
  const check = (template: Template, refuse: (value: string) => string | null): string | null => {
    try {
      return refuse(expandTemplate(template, scopes.real));
    } catch (error) {
      if (!(error instanceof MissingValueError)) throw error;
      notes.push(`${endpoint.name}: "${template.source}" cannot be checked without ${deferred ? 'the task results' : 'its value'} (${error.message})`);
      return null;
    }
  };

  switch (action.kind) {
    case 'redirect': {
      const refusal = check(action.url, (url) => redirectRefusal(url, action.whitelist));
      if (refusal !== null) return fail(refusal);
      break;
    }
    case 'static':
    case 'url': {
      if (action.downloadFilename !== null) {
        const refusal = check(action.downloadFilename, downloadFilenameRefusal);
        if (refusal !== null) return fail(refusal);
      }
      break;
    }
    case 'forward': {
      const target = application.endpointsByName.get(action.endpoint);
      if (target === undefined || depth >= MAX_FORWARDS) break;
      const raw = new Map<string, string[]>();
      if (action.inputParameters === null) {
        for (const [name, value] of scopes.real.parameters) raw.set(name, [value]);
      } else {
        for (const input of action.inputParameters) {
          let value: string;
          try {
            value = expandTemplate(input.value, scopes.real);
          } catch (error) {
            if (!(error instanceof MissingValueError)) throw error;
            note = `the forwarded parameter ${input.name} is only known when the request runs (${error.message})`;
            return { response: describeSuccess(application, endpoint, success, null), note, failure: null };
          }
          raw.set(input.name, [...(raw.get(input.name) ?? []), value]);
        }
      }
      const bound = bindParameters(target, raw);
      if (!bound.ok) {
        const failure = { detail: bound.detail, status: 400, endpoint: target.name };
        return { response: errorResponse(target, failure.status), note: null, failure };
      }
      const inner = simulateResponse(application, target, makeScopes(target, bound.parameters, simulation), simulation, notes, depth + 1);
      const own = describeSuccess(application, endpoint, success, null);
      return {
        response: { ...own, status: inner.response.status, expanded: `${target.name}: ${describeInner(inner.response)}` },
        note: inner.note,
        failure: inner.failure,
        deferred,
      };
    }
    case 'empty':
    case 'body':
      break;
  }
  return { response: describeSuccess(application, endpoint, success, shownTarget(action, scopes.shown)), note, failure: null };
}

function describeInner(response: ResponsePlan): string {
  const expanded = response.expanded;
  return expanded === null || response.summary.includes(expanded) ? response.summary : `${response.summary} → ${expanded}`;
}

/** What the response would hold or point to, secrets masked. */
function shownTarget(action: SuccessAction, shown: ExpansionScope): string | null {
  switch (action.kind) {
    case 'redirect':
      return expandTemplate(action.url, shown);
    case 'url':
      return `GET ${expandTemplate(action.url, shown)}` + (action.downloadFilename === null ? '' : `, download as ${expandTemplate(action.downloadFilename, shown)}`);
    case 'static':
      return action.downloadFilename === null ? null : `download as ${expandTemplate(action.downloadFilename, shown)}`;
    case 'body':
      return expandTemplate(action.body, shown);
    case 'empty':
    case 'forward':
      return null;
  }
}

/**
 * The <error> action's answer to a failure of the primary action: it keeps the failure status
 * unless it sets its own (a redirect, or a <response-body> with a status); a response-from-url takes the failure status too.
 */
function errorResponse(endpoint: Endpoint, failureStatus: number): ResponsePlan {
  const action = endpoint.error.action;
  const status = action.kind === 'redirect' ? 302 : action.kind === 'body' && action.status !== null ? action.status : failureStatus;
  return {
    kind: action.kind,
    status,
    summary: action.kind === 'empty' ? 'problem details (application/problem+json)' : `<error>: ${summarize(action)}`,
    expanded: null,
    condition: null,
    line: endpoint.error.position?.line ?? null,
    waitsFor: [],
  };
}

// ---------------------------------------------------------------------------------------
// Tasks

type Decision = { readonly value: boolean | null; readonly reason: string | null };

/** null when the condition needs a task result or a variable that is not set here. */
function decide(condition: Condition | null, endpoint: Endpoint, scopes: Scopes): Decision {
  if (condition === null) return { value: true, reason: null };
  const templates = condition.kind === 'compare' ? [condition.left, condition.right] : [condition.left];
  const intermediate = templates.flatMap((t) => t.parts.flatMap((p) => (p.kind === 'intermediate' ? [p.name] : [])));
  if (intermediate.length > 0) return { value: null, reason: `the condition uses ${[...new Set(intermediate)].join(', ')}, known only when the tasks run` };
  try {
    const holds = evaluateCondition(condition, scopes.real, endpoint.separator);
    return { value: holds, reason: holds ? 'the condition holds' : 'the condition is false' };
  } catch (error) {
    if (!(error instanceof MissingValueError)) throw error;
    return { value: null, reason: `the condition cannot be decided here: ${error.message}` };
  }
}

function planTask(
  endpoint: Endpoint,
  task: Task,
  scopes: Scopes | null,
  notRunReason: string | null,
  application: Application,
  notes: string[],
): TaskPlan {
  const base = {
    id: task.id,
    kind: task.kind,
    className: task.className,
    line: task.position.line,
    dependsOn: endpoint.taskGraph.dependsOn.get(task.id) ?? [],
    inputs: task.inputs,
    outputs: task.kind === 'http-request' ? task.outputs.map((o) => o.name) : [],
    condition: task.condition?.text ?? null,
    ignoreIfError: task.ignoreIfError,
    timeoutMs: task.timeoutMs,
    retries: task.retries,
  };
  const none = { request: null, emails: null, failure: null };
  if (notRunReason !== null) return { ...base, ...none, willRun: false, willRunReason: notRunReason };
  if (scopes === null) return { ...base, ...none, willRun: null, willRunReason: null };

  const decision = decide(task.condition, endpoint, scopes);
  if (decision.value === false) return { ...base, ...none, willRun: false, willRunReason: decision.reason };
  try {
    if (task.kind === 'http-request') {
      return { ...base, willRun: decision.value, willRunReason: decision.reason, request: planRequest(task, scopes.shown), emails: null, failure: null };
    }
    return { ...base, willRun: decision.value, willRunReason: decision.reason, request: null, emails: planEmails(endpoint, task, scopes, application, notes), failure: null };
  } catch (error) {
    return { ...base, ...none, willRun: decision.value, willRunReason: decision.reason, failure: error instanceof Error ? error.message : String(error) };
  }
}

function planRequest(task: HttpRequestTask, shown: ExpansionScope): RequestPlan {
  const prepared = prepareHttpRequest(task, shown);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(prepared.headers)) headers[name] = prepared.secretHeaders.includes(name) ? SECRET_MASK : value;
  return { method: prepared.method, url: prepared.url, headers, body: prepared.body };
}

function planEmails(endpoint: Endpoint, task: EmailTask, scopes: Scopes, application: Application, notes: string[]): EmailPlan[] {
  // Attachment conditions are decided here with real values (the shown scope masks them);
  // prepareEmails then receives only the attachments that will, or may, be attached.
  const kept: { attachment: EmailAttachment; maybe: string | null }[] = [];
  for (const attachment of task.attachments) {
    const decision = decide(attachment.condition, endpoint, scopes);
    if (decision.value === false) continue;
    kept.push({ attachment, maybe: decision.value === null ? attachment.condition!.text : null });
  }
  const decided: EmailTask = { ...task, attachments: kept.map((k) => ({ ...k.attachment, condition: null })) };
  const prepared = prepareEmails(decided, scopes.shown, [], application.email, endpoint.separator);

  const labels: string[] = [];
  let next = 0;
  const files = prepared.length > 0 ? prepared[0]!.attachments.filter((a) => a.cid === null) : [];
  for (const { attachment, maybe } of kept) {
    const label = attachment.kind === 'static' ? (files[next++]?.filename ?? basename(attachment.filename)) : UPLOADS_LABEL;
    labels.push(maybe === null ? label : `${label} (if ${maybe})`);
  }
  if (kept.some((k) => k.attachment.kind === 'uploads')) {
    const note = `${endpoint.name}/${task.id}: a dry-run has no uploaded files; serve attaches every file uploaded with the request`;
    if (!notes.includes(note)) notes.push(note);
  }

  const secretHeaders = new Set((application.email?.headers ?? []).filter((h) => h.value.parts.some((p) => p.kind === 'env')).map((h) => h.name));
  return prepared.map((email) => ({
    from: email.from,
    to: [email.to],
    cc: email.cc,
    bcc: email.bcc,
    replyTo: email.replyTo,
    subject: email.subject,
    headers: Object.fromEntries(Object.entries(email.headers).map(([n, v]) => [n, secretHeaders.has(n) ? SECRET_MASK : v])),
    bodies: email.bodies.map((b) => ({ contentType: b.contentType, content: b.content })),
    attachments: labels,
    inline: email.attachments.filter((a) => a.cid !== null).map((a) => `${a.filename} (cid:${a.cid})`),
  }));
}
