// One request carried out: the decision (decision.ts, pure) is taken, then executed here —
// static files opened, upstreams requested, tasks started, the <error> action rendered.
// Independent of node:http: the server adapter hands in what it parsed and writes what comes back.

import type { Application, Endpoint } from '../compiler/ast.js';
import type { ExpansionScope } from '../template/expand.js';
import type { RawBody, RequestUploads, Upload } from '../upload.js';
import { openStatic, requestUpstream, type ActionContext } from './actions.js';
import {
  decideAction,
  decideRequest,
  decideResponse,
  internalFailure,
  systemFor,
  type ActionFailure,
  type Decision,
  type DecisionInput,
  type Proceed,
  type RequestInfo,
  type ResponseDecision,
} from './decision.js';
import type { RuntimeObserver } from './observer.js';
import type { Environment, RawParameters } from './parameters.js';
import { NO_SOURCES, type RequestSources } from './sources.js';
import { discardResponse, problem, type RuntimeResponse } from './response.js';
import { prepareBeforeSideEffects, type PreparedTasks } from './preparation.js';
import type { TaskEngine } from './task-runner.js';
import type { TaskKinds } from '../tasks/registry.js';
import type { TaskSettings } from '../tasks/settings.js';
import { NO_SPAN, type Span } from '../tracing.js';
import type { Guards } from './guards.js';
import { expandTemplate } from '../template/expand.js';
import { rateLimitKey } from './rate-limit-key.js';
import { deduplicationKey, deliveryIdOf, runDeduplicated, type Answered, type DeduplicationStore } from './deduplication.js';

export type { RequestInfo } from './decision.js';

/** Long-lived, per loaded application. */
export interface PipelineContext extends ActionContext {
  readonly application: Application;
  /** Expanded secret keys; null without a security.xml. */
  readonly secretKeys: readonly Buffer[] | null;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly observer: RuntimeObserver;
  /** The kinds the application was compiled with, for preparing tasks before the first side effect. */
  readonly kinds: TaskKinds;
  /** What the command line decided for every task kind, for preparing tasks as the task engine runs them. */
  readonly taskSettings: TaskSettings;
  /** Rate limits and CAPTCHA; null when nothing serves them (dry-run, tests without protections). */
  readonly guards: Guards | null;
  /** The record of <deduplicate> keys; null or absent: requests are not deduplicated (dry-run). */
  readonly deduplication?: DeduplicationStore | null;
  /** Created on first use, so an application without tasks never opens an SMTP pool. */
  taskEngine(): TaskEngine;
  /** Every started task run is handed here, so shutdown can wait for it. */
  trackTasks(settled: Promise<void>): void;
  /**
   * serve --queue: hands a tasks="background" run to the durable queue (src/queue/) and resolves
   * once it is stored: `queued`, `refused` (the store cannot take it; answered 503), or
   * `in-process` (--queue-fallback in-process: run it here as without the queue).
   */
  readonly enqueueTasks?: ((run: BackgroundRun) => Promise<'queued' | 'refused' | 'in-process'>) | undefined;
}

/** What a durable queue stores of a background run: the bound values, never the expanded tasks. */
export interface BackgroundRun {
  readonly endpoint: Endpoint;
  readonly requestId: string;
  /** Bound parameters and system values (env stays out: the worker uses its own). */
  readonly scope: ExpansionScope;
  readonly uploads: readonly Upload[];
  /** The request body as received, when the endpoint keeps it for a task that forwards it. */
  readonly body: RawBody | null;
  /** The request's span (NO_SPAN without tracing): the queued run continues its trace. */
  readonly span: Span;
}

export interface EndpointRequest {
  readonly endpoint: Endpoint;
  readonly raw: RawParameters;
  /** Headers and the parsed JSON body, for parameters declared with a source; absent: none. */
  readonly sources?: RequestSources;
  /** Held by the task engine while the request's tasks run. */
  readonly uploads: RequestUploads;
  readonly info: RequestInfo;
  /** The request's span when tracing is on: tasks and upstream calls are its children. */
  readonly span?: Span;
  /** For an endpoint with <deduplicate>: SHA-256 of the query and the raw body (deduplication.ts). */
  readonly fingerprint?: string | undefined;
  /** A delivery sent again from the log: not deduplicated, and the honeypot, rate limits and CAPTCHA are not applied. */
  readonly replay?: boolean;
}

/** `outcome`: 'error' when the <error> action (or a problem answer) was used. */
export type PipelineResult = Answered;

const NO_PARAMETERS: ReadonlyMap<string, string> = new Map();

/**
 * Answers a request. An endpoint without tasks whose response needs no I/O is answered
 * synchronously (no promise at all); everything else takes the asynchronous path.
 */
export function runRequest(context: PipelineContext, request: EndpointRequest): PipelineResult | Promise<PipelineResult> {
  const input: DecisionInput = {
    application: context.application,
    endpoint: request.endpoint,
    raw: request.raw,
    sources: request.sources ?? NO_SOURCES,
    info: request.info,
    env: context.env,
    secretKeys: context.secretKeys,
  };
  const decision = decideRequest(input);
  // Decided at compile time: an endpoint without <deduplicate> looks no further than this.
  if (request.endpoint.deduplicate !== null && decision.kind === 'proceed' && context.deduplication != null && request.replay !== true) {
    const key = deduplicationKey(request.endpoint, decision);
    if (key !== null) {
      const run = (claimed: Decision) => carryOut(context, input, request, claimed);
      const id = deliveryIdOf(request.endpoint, key);
      return runDeduplicated(context.deduplication, request.endpoint, id, request.fingerprint ?? '', request.info.requestId, decision, run).then(
        (result): PipelineResult => ({ ...result, deduplicationKey: key }),
      );
    }
  }
  return carryOut(context, input, request, decision);
}

/** A decided request: its checks, then the fast path or execute. */
function carryOut(context: PipelineContext, input: DecisionInput, request: EndpointRequest, decision: Decision): PipelineResult | Promise<PipelineResult> {
  // Decided at compile time: an endpoint without protections looks no further than this.
  if (request.endpoint.protections?.afterBinding === true && decision.kind === 'proceed' && request.replay !== true)
    return guarded(context, input, request, decision);
  if (decision.kind === 'proceed' && decision.tasks.length === 0 && decision.response?.kind === 'respond') {
    return { response: decision.response.response, outcome: 'success' };
  }
  return execute(context, input, request, decision);
}

/**
 * The checks that come after the parameters are bound and before preparation (the first side
 * effect): the honeypot, rate limits by a parameter, the CAPTCHA. Rate limits by client address
 * were checked by the server before the body was read (docs/behaviour.md, "Public forms").
 */
async function guarded(context: PipelineContext, input: DecisionInput, request: EndpointRequest, decision: Proceed): Promise<PipelineResult> {
  const protections = request.endpoint.protections!;
  const { info } = request;
  if (protections.honeypot !== null && (filled(request.raw.get(protections.honeypot)) || request.uploads.sentFile(protections.honeypot))) {
    context.guards?.noted(request.endpoint, { check: 'honeypot', outcome: 'caught' }, info.requestId);
    return { ...(await answerWithoutTasks(context, input, request, decision)), classified: 'spam' };
  }
  const guards = context.guards;
  if (guards === null) return execute(context, input, request, decision);
  if (protections.limitsByParameter.length > 0) {
    const parameters = decision.scope.parameters;
    const exceeded = await guards.limit(
      request.endpoint,
      protections.limitsByParameter,
      (rule) => rateLimitKey(parameters.get(rule.byParameter!) ?? ''),
      info.requestId,
    );
    if (exceeded !== null) return { response: tooManyRequests(exceeded.headers), outcome: 'error' };
  }
  const captcha = protections.captcha;
  if (captcha !== null) {
    const token = request.raw.get(captcha.parameter)?.[0]?.trim() ?? '';
    if (token === '') {
      guards.noted(request.endpoint, { check: 'captcha', outcome: 'missing' }, info.requestId);
      return { response: problem(403, `the CAPTCHA was not solved (no "${captcha.parameter}" field)`), outcome: 'error', classified: 'spam' };
    }
    const envScope = { parameters: NO_PARAMETERS, system: decision.scope.system, env: context.env };
    const verdict = await guards.verifyCaptcha(captcha, {
      secret: expandTemplate(captcha.secret, envScope),
      verifyUrl: expandTemplate(captcha.verifyUrl, envScope),
      token,
      clientIp: info.clientIp,
      requestId: info.requestId,
    });
    if (!verdict.ok) {
      guards.noted(request.endpoint, { check: 'captcha', outcome: verdict.status === 503 ? 'unavailable' : 'refused' }, info.requestId, {
        reason: verdict.reason,
      });
      const response: RuntimeResponse =
        verdict.status === 503 ? { kind: 'problem', status: 503, detail: verdict.detail, headers: RETRY_SOON } : problem(403, verdict.detail);
      return verdict.status === 503 ? { response, outcome: 'error' } : { response, outcome: 'error', classified: 'spam' };
    }
  }
  return execute(context, input, request, decision);
}

/**
 * The Retry-After of a 503 for a passing outage (the CAPTCHA verifier does not answer, the queue
 * cannot store a background run): how long a client is asked to wait before trying again.
 */
const RETRY_SOON: Readonly<Record<string, string>> = { 'retry-after': '5' };

export function tooManyRequests(headers: Readonly<Record<string, string>>): RuntimeResponse {
  return { kind: 'problem', status: 429, detail: 'too many requests; try again later', headers };
}

/** A trap people never see: any value but nothing counts, a space too (a person never types one there). */
function filled(values: readonly string[] | undefined): boolean {
  return values !== undefined && values.some((v) => v !== '');
}

/**
 * A honeypot hit: the answer its success would give, forwards followed, and no task started
 * anywhere along the chain. A response that waits for tasks cannot be built without them: it
 * is an empty 200.
 */
async function answerWithoutTasks(context: PipelineContext, input: DecisionInput, request: EndpointRequest, decision: Proceed): Promise<PipelineResult> {
  let current: Decision = decision;
  let target = request;
  for (;;) {
    if (current.kind !== 'proceed') return execute(context, input, target, current);
    const response: ResponseDecision | null = current.response;
    if (response === null) return { response: { kind: 'empty', status: 200 }, outcome: 'success' };
    if (response.kind !== 'forward') return realize(context, input, target, current, response, null);
    current = response.target;
    target = { ...target, endpoint: current.endpoint };
  }
}

/** `prepared`: the tasks of a forward chain, prepared when the chain was decided; null at its start. */
async function execute(
  context: PipelineContext,
  input: DecisionInput,
  request: EndpointRequest,
  decision: Decision,
  prepared: PreparedTasks | null = null,
): Promise<PipelineResult> {
  switch (decision.kind) {
    case 'refused':
      if (decision.environment === null) return { response: problem(decision.failure.status, decision.failure.detail), outcome: 'error' };
      return renderError(context, decision.endpoint, request, decision.environment, decision.failure);
    case 'undecided':
      return renderError(context, decision.endpoint, request, decision.environment, internalFailure(new Error(decision.reason)));
    case 'proceed': {
      const preparation =
        prepared !== null
          ? ({ ok: true, prepared } as const)
          : prepareBeforeSideEffects(
              {
                kinds: context.kinds,
                application: context.application,
                uploads: request.uploads.files,
                body: request.uploads.body,
                settings: context.taskSettings,
              },
              decision,
            );
      if (!preparation.ok) return renderError(context, preparation.endpoint, request, decision.environment, preparation.failure);
      return proceed(context, input, request, decision, preparation.prepared);
    }
  }
}

async function proceed(
  context: PipelineContext,
  input: DecisionInput,
  request: EndpointRequest,
  decision: Proceed,
  prepared: PreparedTasks,
): Promise<PipelineResult> {
  const { endpoint } = decision;
  let response: RuntimeResponse | null = null;
  if (decision.response !== null) {
    const answered = await realize(context, input, request, decision, decision.response, prepared);
    if (answered.outcome === 'error') return answered;
    response = answered.response;
  }
  if (decision.tasks.length === 0) {
    return response !== null ? { response, outcome: 'success' } : finishDeferred(context, input, request, decision, null);
  }

  if (endpoint.tasksMode === 'background' && context.enqueueTasks !== undefined) {
    const queued = await context.enqueueTasks({
      endpoint,
      requestId: request.info.requestId,
      scope: decision.scope,
      uploads: request.uploads.files,
      body: request.uploads.body,
      span: request.span ?? NO_SPAN,
    });
    if (queued === 'queued') return { response: response ?? { kind: 'empty', status: 200 }, outcome: 'success' };
    if (queued === 'refused') {
      if (response !== null) discardResponse(response);
      const refusal = {
        kind: 'problem',
        status: 503,
        detail: 'the tasks could not be queued; try again later',
        headers: RETRY_SOON,
      } as const;
      return { response: refusal, outcome: 'error' };
    }
  }

  let run;
  try {
    const ready = prepared.get(endpoint);
    run = context.taskEngine().start({
      endpoint,
      scope: decision.scope,
      uploads: request.uploads,
      requestId: request.info.requestId,
      ...(ready !== undefined ? { prepared: ready } : {}),
      ...(request.span !== undefined ? { span: request.span } : {}),
    });
  } catch (error) {
    if (response !== null) discardResponse(response);
    return renderError(context, endpoint, request, decision.environment, internalFailure(error));
  }
  context.trackTasks(run.settled);
  if (endpoint.tasksMode === 'background') {
    // Each task outcome is reported through the observer; nothing is left to do with the result.
    run.result.catch(() => {});
    return { response: response ?? { kind: 'empty', status: 200 }, outcome: 'success' };
  }

  let result;
  try {
    result = await run.result;
  } catch (error) {
    if (response !== null) discardResponse(response);
    return renderError(context, endpoint, request, decision.environment, internalFailure(error));
  }
  if (!result.ok) {
    if (response !== null) discardResponse(response);
    // The task engine has logged the failure with its task outcome already.
    const what = result.cause === 'task-failed' ? `task "${result.failedTask}" failed` : 'the run was interrupted';
    const failure = { status: 502, detail: what, internal: `${what}: ${result.error.message}` };
    return renderError(context, endpoint, request, decision.environment, failure, false);
  }
  if (response !== null) return { response, outcome: 'success' };
  return finishDeferred(context, input, request, decision, result.intermediate);
}

/** A <success> with after/inputs: its response is decided and built once the tasks have run. */
async function finishDeferred(
  context: PipelineContext,
  input: DecisionInput,
  request: EndpointRequest,
  decision: Proceed,
  intermediate: ReadonlyMap<string, string> | null,
): Promise<PipelineResult> {
  return realize(context, input, request, decision, decideResponse(input, decision, intermediate), null);
}

/** The I/O of a decided response: a file opened, an upstream requested, a forward carried out. */
/** `prepared`: of the chain this response belongs to; null when decided after the tasks (a new chain starts). */
async function realize(
  context: PipelineContext,
  input: DecisionInput,
  request: EndpointRequest,
  decision: Proceed,
  response: ResponseDecision,
  prepared: PreparedTasks | null,
): Promise<PipelineResult> {
  const fail = (failure: ActionFailure) => renderError(context, decision.endpoint, request, decision.environment, failure);
  try {
    switch (response.kind) {
      case 'respond':
        return { response: response.response, outcome: 'success' };
      case 'forward':
        return await execute(context, input, { ...request, endpoint: response.target.endpoint }, response.target, prepared);
      case 'refused':
        return await fail(response.failure);
      case 'undecidable':
        return await fail(internalFailure(new Error(response.reason)));
      case 'static':
      case 'url': {
        const opened = response.kind === 'static' ? await openStatic(response) : await requestUpstream(response, context, request.span);
        return opened.ok ? { response: opened.response, outcome: 'success' } : await fail(opened.failure);
      }
    }
  } catch (error) {
    return fail(internalFailure(error));
  }
}

/** The <error> action, or the problem body when it is empty or cannot be prepared itself. */
async function renderError(
  context: PipelineContext,
  endpoint: Endpoint,
  request: EndpointRequest,
  environment: Environment,
  failure: ActionFailure,
  log = true,
): Promise<PipelineResult> {
  const { info } = request;
  // A client's mistake (4xx) is routine; only server-side failures are worth a warning.
  if (log && failure.status >= 500) {
    context.observer.warn('primary action failed', { requestId: info.requestId, endpoint: endpoint.name, status: failure.status, reason: failure.internal });
  }
  const action = endpoint.error.action;
  if (action.kind === 'empty') return { response: problem(failure.status, failure.detail, failure.errors), outcome: 'error' };
  const scope: ExpansionScope = {
    parameters: NO_PARAMETERS,
    system: systemFor(endpoint, info, environment),
    env: context.env,
    internalErrorText: failure.internal,
  };
  const decided = decideAction(action, scope, failure.status);
  let reason: string;
  switch (decided.kind) {
    case 'respond':
      return { response: decided.response, outcome: 'error' };
    case 'static':
    case 'url': {
      try {
        const opened = decided.kind === 'static' ? await openStatic(decided) : await requestUpstream(decided, context, request.span);
        if (opened.ok) return { response: opened.response, outcome: 'error' };
        reason = opened.failure.internal;
      } catch (error) {
        reason = internalFailure(error).internal;
      }
      break;
    }
    case 'refused':
      reason = decided.failure.internal;
      break;
    case 'undecidable':
      reason = decided.reason;
      break;
    case 'forward':
      reason = 'an <error> action cannot forward';
      break;
  }
  context.observer.warn('the <error> action failed too', { requestId: info.requestId, endpoint: endpoint.name, reason });
  return { response: problem(failure.status, failure.detail, failure.errors), outcome: 'error' };
}
