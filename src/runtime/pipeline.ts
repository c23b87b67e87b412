// One request, step by step (runtime.md): parameters → hash → primary action → tasks →
// response. Independent of node:http: the server adapter hands in what it parsed and writes
// what comes back.

import type { Application, Endpoint, SuccessResponse } from '../compiler/ast.js';
import type { SystemParameter } from '../template/types.js';
import { expandTemplate, type ExpansionScope } from '../template/expand.js';
import { prepareAction, prepareImmediate, reason, type ActionContext, type ActionFailure, type PreparedAction } from './actions.js';
import { hashMatches } from './hash.js';
import type { RuntimeObserver } from './observer.js';
import { bindParameters, parseEnvironment, systemValues, type Environment, type RawParameters, type RequestFacts } from './parameters.js';
import { selectSuccess } from './primary-rules.js';
import { discardResponse, problem, type RuntimeResponse } from './response.js';
import { startTasks, type TaskServices } from './task-runner.js';
import type { Upload } from '../upload.js';

/** Long-lived, per loaded application. */
export interface PipelineContext extends ActionContext {
  readonly application: Application;
  /** Expanded secret keys; null without a security.xml. */
  readonly secretKeys: readonly Buffer[] | null;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly observer: RuntimeObserver;
  /** Created on first use, so an application without tasks never opens an SMTP pool. */
  taskServices(): TaskServices;
  /** Every started task run is handed here, so shutdown can wait for it. */
  trackTasks(settled: Promise<void>): void;
}

export type RequestInfo = Omit<RequestFacts, 'environment'>;

export interface EndpointRequest {
  readonly endpoint: Endpoint;
  readonly raw: RawParameters;
  readonly uploads: readonly Upload[];
  readonly info: RequestInfo;
}

export interface PipelineResult {
  readonly response: RuntimeResponse;
  /** 'error' when the <error> action (or a problem answer) was used. */
  readonly outcome: 'success' | 'error';
}

const NO_PARAMETERS: ReadonlyMap<string, string> = new Map();

/**
 * Answers a request. An endpoint without tasks whose response needs no I/O is answered
 * synchronously (no promise at all); everything else takes the full, asynchronous path.
 */
export function runRequest(context: PipelineContext, request: EndpointRequest): PipelineResult | Promise<PipelineResult> {
  return answerImmediately(context, request) ?? runEndpoint(context, request, null);
}

/** The synchronous path; null whenever anything needs I/O or fails (the full path then redoes it all). */
function answerImmediately(context: PipelineContext, request: EndpointRequest): PipelineResult | null {
  const { endpoint, raw } = request;
  if (endpoint.tasks.length > 0) return null;
  const parsed = parseEnvironment(raw);
  if (!parsed.ok) return null;
  if (context.secretKeys !== null && !authenticated(context.secretKeys, endpoint, raw, parsed.environment)) return null;
  const bound = bindParameters(endpoint, raw);
  if (!bound.ok) return null;
  try {
    const scope: ExpansionScope = { parameters: bound.parameters, system: systemFor(endpoint, request.info, parsed.environment), env: context.env };
    const response = prepareImmediate(selectSuccess(endpoint, scope).action, scope);
    return response === null ? null : { response, outcome: 'success' };
  } catch {
    return null;
  }
}

function systemFor(endpoint: Endpoint, info: RequestInfo, environment: Environment): Record<SystemParameter, string> {
  // A literal rather than a spread of `info`: this runs on every request.
  return systemValues(endpoint, { requestId: info.requestId, environment, clientIp: info.clientIp, userAgent: info.userAgent, baseUrl: info.baseUrl });
}

/** `forwardedEnvironment` is set when another endpoint forwards here: no hash check, same environment. */
async function runEndpoint(context: PipelineContext, request: EndpointRequest, forwardedEnvironment: Environment | null): Promise<PipelineResult> {
  const { endpoint, raw } = request;
  let environment: Environment;
  if (forwardedEnvironment !== null) {
    environment = forwardedEnvironment;
  } else {
    const parsed = parseEnvironment(raw);
    if (!parsed.ok) return renderError(context, request, 'live', { status: 400, detail: parsed.detail, internal: parsed.detail });
    environment = parsed.environment;
    if (context.secretKeys !== null && !authenticated(context.secretKeys, endpoint, raw, environment)) {
      // Not the <error> action: an unauthenticated client learns nothing about the endpoint.
      return { response: problem(401, 'missing or invalid "hash" parameter'), outcome: 'error' };
    }
  }

  const bound = bindParameters(endpoint, raw);
  if (!bound.ok) return renderError(context, request, environment, { status: 400, detail: bound.detail, internal: bound.detail });
  const scope: ExpansionScope = {
    parameters: bound.parameters,
    system: systemFor(endpoint, request.info, environment),
    env: context.env,
  };

  let success: SuccessResponse;
  let response: RuntimeResponse | null = null;
  try {
    success = selectSuccess(endpoint, scope);
    const deferred = endpoint.tasksMode === 'wait' && endpoint.tasks.length > 0 && (success.after.length > 0 || success.inputs.length > 0);
    if (!deferred) {
      const prepared = await prepareSuccess(context, request, success, scope, environment);
      if ('answered' in prepared) {
        if (prepared.answered.outcome === 'error') return prepared.answered;
        response = prepared.answered.response;
      } else if (!prepared.ok) {
        return renderError(context, request, environment, prepared.failure);
      } else {
        response = prepared.response;
      }
    }
  } catch (error) {
    return renderError(context, request, environment, internalFailure(error));
  }

  if (endpoint.tasks.length === 0) {
    return response !== null ? { response, outcome: 'success' } : finishDeferred(context, request, success, scope, environment);
  }

  let run;
  try {
    run = startTasks({ endpoint, scope, uploads: request.uploads, requestId: request.info.requestId }, context.taskServices());
  } catch (error) {
    if (response !== null) discardResponse(response);
    return renderError(context, request, environment, internalFailure(error));
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
    return renderError(context, request, environment, internalFailure(error));
  }
  if (!result.ok) {
    if (response !== null) discardResponse(response);
    // The task engine has logged the failure with its task outcome already.
    return renderError(
      context,
      request,
      environment,
      { status: 502, detail: `task "${result.failedTask}" failed`, internal: result.internalError },
      false,
    );
  }
  if (response !== null) return { response, outcome: 'success' };
  return finishDeferred(context, request, success, { ...scope, intermediate: result.intermediate }, environment);
}

/** A <success> with after/inputs: its response is built once the tasks have run. */
async function finishDeferred(
  context: PipelineContext,
  request: EndpointRequest,
  success: SuccessResponse,
  scope: ExpansionScope,
  environment: Environment,
): Promise<PipelineResult> {
  try {
    const prepared = await prepareSuccess(context, request, success, scope, environment);
    if ('answered' in prepared) return prepared.answered;
    if (!prepared.ok) return renderError(context, request, environment, prepared.failure);
    return { response: prepared.response, outcome: 'success' };
  } catch (error) {
    return renderError(context, request, environment, internalFailure(error));
  }
}

async function prepareSuccess(
  context: PipelineContext,
  request: EndpointRequest,
  success: SuccessResponse,
  scope: ExpansionScope,
  environment: Environment,
): Promise<PreparedAction | { readonly answered: PipelineResult }> {
  const action = success.action;
  if (action.kind !== 'forward') return prepareAction(action, scope, context, null);
  const target = context.application.endpointsByName.get(action.endpoint);
  if (target === undefined) {
    // The compiler rejects unknown targets; reaching this is a bug, not the client's fault.
    return { ok: false, failure: { status: 500, detail: 'the request could not be completed', internal: `forward target "${action.endpoint}" does not exist` } };
  }
  const raw = new Map<string, string[]>();
  if (action.inputParameters === null) {
    for (const [name, value] of scope.parameters) raw.set(name, [value]);
  } else {
    for (const input of action.inputParameters) {
      const value = expandTemplate(input.value, scope);
      const list = raw.get(input.name);
      if (list === undefined) raw.set(input.name, [value]);
      else list.push(value);
    }
  }
  const answered = await runEndpoint(context, { endpoint: target, raw, uploads: request.uploads, info: request.info }, environment);
  return { answered };
}

/** The <error> action, or the problem body when it is empty or cannot be prepared itself. */
async function renderError(
  context: PipelineContext,
  request: EndpointRequest,
  environment: Environment,
  failure: ActionFailure,
  log = true,
): Promise<PipelineResult> {
  const { endpoint } = request;
  // A client's mistake (4xx) is routine; only server-side failures are worth a warning.
  if (log && failure.status >= 500) context.observer.warn('primary action failed', {
    requestId: request.info.requestId,
    endpoint: endpoint.name,
    status: failure.status,
    reason: failure.internal,
  });
  const action = endpoint.error.action;
  if (action.kind === 'empty') return { response: problem(failure.status, failure.detail), outcome: 'error' };
  const system = systemFor(endpoint, request.info, environment);
  const scope: ExpansionScope = { parameters: NO_PARAMETERS, system, env: context.env, internalErrorText: failure.internal };
  try {
    const prepared = await prepareAction(action, scope, context, failure.status);
    if (prepared.ok) return { response: prepared.response, outcome: 'error' };
    context.observer.warn('the <error> action failed too', { requestId: request.info.requestId, endpoint: endpoint.name, reason: prepared.failure.internal });
  } catch (error) {
    context.observer.warn('the <error> action failed too', { requestId: request.info.requestId, endpoint: endpoint.name, reason: reason(error) });
  }
  return { response: problem(failure.status, failure.detail), outcome: 'error' };
}


function authenticated(keys: readonly Buffer[], endpoint: Endpoint, raw: RawParameters, environment: Environment): boolean {
  const sent = raw.get('hash');
  if (sent === undefined || sent.length !== 1) return false;
  const names = endpoint.includeInHash ?? [];
  const values: string[] = [];
  for (const name of names) {
    const given = raw.get(name);
    if (given !== undefined && given.length > 0) values.push(given.length === 1 ? given[0]! : given.join(endpoint.separator));
    else values.push(endpoint.parametersByName.get(name)?.defaultValue ?? '');
  }
  return hashMatches(endpoint, values, environment, keys, sent[0]);
}

function internalFailure(error: unknown): ActionFailure {
  return { status: 500, detail: 'the request could not be completed', internal: reason(error) };
}
