// What happens to one request, decided without I/O: environment → hash → parameters → which
// <success> → its response, or the forward chain with the parameters each target receives →
// the tasks to start. serve carries a decision out (pipeline.ts); dry-run prints it
// (cli/plan/simulate.ts). Both call these functions, so a plan cannot drift from what runs.

import type { Application, Endpoint, ErrorAction, RedirectAction, StaticAction, SuccessAction, SuccessResponse, Task, UrlAction } from '../compiler/ast.js';
import { describeError } from '../errors.js';
import { UnsafeValueError } from '../template/escape.js';
import { expandTemplate, MissingValueError, type ExpansionScope } from '../template/expand.js';
import { expandUrl } from '../template/url.js';
import type { SystemParameter, Template } from '../template/types.js';
import { hashMatches } from './hash.js';
import { bindParameters, parseEnvironment, systemValues, type Environment, type ParameterError, type RawParameters, type RequestFacts } from './parameters.js';
import { downloadFilenameRefusal } from '../compiler/download-filename.js';
import { redirectRefusal, selectSuccess } from './primary-rules.js';
import type { RequestSources } from './sources.js';
import type { RuntimeResponse } from './response.js';

export type RequestInfo = Omit<RequestFacts, 'environment'>;

/** Why a primary action failed: `detail` may be shown to a client, `internal` only to logs and ${internal-error-text}. */
export interface ActionFailure {
  readonly status: number;
  readonly detail: string;
  readonly internal: string;
  /** A 400 for parameters: each one that is missing or not valid. */
  readonly errors?: readonly ParameterError[];
}

export interface DecisionInput {
  readonly application: Application;
  readonly endpoint: Endpoint;
  readonly raw: RawParameters;
  /** Headers and the parsed JSON body, for parameters declared with a source. */
  readonly sources: RequestSources;
  readonly info: RequestInfo;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Expanded secret keys of security.xml; null: no hash is checked (no security.xml, or dry-run). */
  readonly secretKeys: readonly Buffer[] | null;
}

export type Decision = Refused | Undecided | Proceed;

/** Answered before anything of the endpoint runs: a bad `environment`, hash or parameter. */
export interface Refused {
  readonly kind: 'refused';
  /** Whose <error> answers: for a forward, the target that refused. */
  readonly endpoint: Endpoint;
  readonly failure: ActionFailure;
  /** null: answered with a bare problem, not the <error> action (an unauthenticated client learns nothing). */
  readonly environment: Environment | null;
}

/** No <success> can be chosen without a value only the running service has (dry-run: an unset variable). */
export interface Undecided {
  readonly kind: 'undecided';
  readonly endpoint: Endpoint;
  readonly environment: Environment;
  readonly reason: string;
}

export interface Proceed {
  readonly kind: 'proceed';
  readonly endpoint: Endpoint;
  readonly environment: Environment;
  /** Parameters, system values and env: what the response and the tasks expand with. */
  readonly scope: ExpansionScope;
  readonly success: SuccessResponse;
  /** null when the response is built after the tasks (success.deferred): decideResponse then. */
  readonly response: ResponseDecision | null;
  /** Started once the response is known to succeed (before it, when it is deferred). */
  readonly tasks: readonly Task[];
}

/** The chosen action, with everything decidable done; static files and upstreams are left to open. */
export type ResponseDecision =
  /** Complete: empty, redirect, body. */
  | { readonly kind: 'respond'; readonly response: RuntimeResponse }
  | { readonly kind: 'static'; readonly action: StaticAction; readonly status: number; readonly downloadFilename: string | null }
  /** `status` null: the upstream's own. */
  | { readonly kind: 'url'; readonly action: UrlAction; readonly url: string; readonly status: number | null; readonly downloadFilename: string | null }
  | { readonly kind: 'forward'; readonly target: Decision }
  | { readonly kind: 'refused'; readonly failure: ActionFailure }
  /** A value it needs is only known later (an intermediate value, or in dry-run an unset variable). */
  | { readonly kind: 'undecidable'; readonly template: Template; readonly reason: string };

/** Deepest forward chain followed; the compiler refuses cycles, so only a bug gets here. */
const MAX_FORWARDS = 16;

/** The decision for a request as received: the environment and hash are checked. */
export function decideRequest(input: DecisionInput): Decision {
  const { endpoint, raw } = input;
  const parsed = parseEnvironment(raw);
  if (!parsed.ok) return refused(endpoint, badRequest(parsed.detail), 'live');
  if (input.secretKeys !== null && !authenticated(input.secretKeys, endpoint, raw, parsed.environment)) {
    return refused(endpoint, { status: 401, detail: 'missing or invalid "hash" parameter', internal: 'missing or invalid "hash" parameter' }, null);
  }
  return decideEndpoint(input, endpoint, raw, parsed.environment, 0);
}

/** An endpoint reached with `raw` in `environment`: the request's own, or a forward's (no hash check). */
function decideEndpoint(input: DecisionInput, endpoint: Endpoint, raw: RawParameters, environment: Environment, depth: number): Decision {
  // A forward target gets what the forward hands on, by name; only the request's own endpoint reads its headers and body.
  const bound = bindParameters(endpoint, raw, depth === 0 ? input.sources : null);
  if (!bound.ok) return refused(endpoint, { ...badRequest(bound.detail), errors: bound.errors }, environment);
  const scope: ExpansionScope = { parameters: bound.parameters, system: systemFor(endpoint, input.info, environment), env: input.env };
  let success: SuccessResponse;
  try {
    success = selectSuccess(endpoint, scope);
  } catch (error) {
    if (error instanceof MissingValueError) return { kind: 'undecided', endpoint, environment, reason: error.message };
    return refused(endpoint, internalFailure(error), environment);
  }
  return {
    kind: 'proceed',
    endpoint,
    environment,
    scope,
    success,
    response: success.deferred ? null : decideSuccessResponse(input, success.action, scope, environment, depth),
    tasks: endpoint.tasks,
  };
}

/** A <success>'s response for `scope`: before the tasks, or after them with their intermediate values. */
export function decideResponse(input: DecisionInput, decision: Proceed, intermediate: ReadonlyMap<string, string> | null): ResponseDecision {
  const scope = intermediate === null ? decision.scope : { ...decision.scope, intermediate };
  return decideSuccessResponse(input, decision.success.action, scope, decision.environment, 0);
}

function decideSuccessResponse(input: DecisionInput, action: SuccessAction, scope: ExpansionScope, environment: Environment, depth: number): ResponseDecision {
  if (action.kind !== 'forward') return decideAction(action, scope, null);
  const target = input.application.endpointsByName.get(action.endpoint);
  if (target === undefined || depth >= MAX_FORWARDS) {
    // The compiler rejects unknown targets and cycles; reaching this is a bug, not the client's fault.
    return {
      kind: 'refused',
      failure: { status: 500, detail: 'the request could not be completed', internal: `forward to "${action.endpoint}" cannot be followed` },
    };
  }
  const raw = new Map<string, string[]>();
  if (action.inputParameters === null) {
    for (const [name, value] of scope.parameters) raw.set(name, [value]);
  } else {
    for (const parameter of action.inputParameters) {
      const value = expand(parameter.value, scope);
      if (typeof value !== 'string') return value;
      const list = raw.get(parameter.name);
      if (list === undefined) raw.set(parameter.name, [value]);
      else list.push(value);
    }
  }
  return { kind: 'forward', target: decideEndpoint(input, target, raw, environment, depth + 1) };
}

/** An action other than a forward; `errorStatus` is null for a <success>, else the failure's status. */
export function decideAction(action: LocalAction, scope: ExpansionScope, errorStatus: number | null): ResponseDecision {
  const status = actionStatus(action, errorStatus);
  switch (action.kind) {
    case 'empty':
      return errorStatus === null ? EMPTY_OK : { kind: 'respond', response: { kind: 'empty', status: status! } };
    case 'body': {
      const body = expand(action.body, scope);
      if (typeof body !== 'string') return body;
      return { kind: 'respond', response: { kind: 'body', status: status!, contentType: action.contentType, body } };
    }
    case 'redirect':
      return decideRedirect(action, scope);
    case 'static': {
      const name = downloadFilename(action.downloadFilename, scope);
      if (name !== null && typeof name !== 'string') return name;
      return { kind: 'static', action, status: status!, downloadFilename: name };
    }
    case 'url': {
      const name = downloadFilename(action.downloadFilename, scope);
      if (name !== null && typeof name !== 'string') return name;
      // A value must not shorten the upstream's path ("..": 400 naming the parameter).
      const url = expand(action.url, scope, expandUrl);
      if (typeof url !== 'string') return url;
      return { kind: 'url', action, url, status, downloadFilename: name };
    }
  }
}

type LocalAction = Exclude<SuccessAction, { kind: 'forward' }> | ErrorAction;

/**
 * The status an action answers with; null: the upstream's (response-from-url of a <success>).
 * An <error> action keeps the failure's status unless it sets its own (a redirect, a body's status).
 */
export function actionStatus(action: LocalAction, errorStatus: number | null): number | null {
  switch (action.kind) {
    case 'redirect':
      return 302;
    case 'body':
      return action.status ?? errorStatus ?? 200;
    case 'url':
      return errorStatus;
    case 'empty':
    case 'static':
      return errorStatus ?? 200;
  }
}

const EMPTY_OK: ResponseDecision = { kind: 'respond', response: { kind: 'empty', status: 200 } };

function decideRedirect(action: RedirectAction, scope: ExpansionScope): ResponseDecision {
  const location = expand(action.url, scope);
  if (typeof location !== 'string') return location;
  const refusal = redirectRefusal(location, action.whitelist);
  if (refusal !== null) return { kind: 'refused', failure: badRequest(refusal) };
  // A value at the start of the URL is inserted as is: spaces, non-ASCII and above all CR/LF
  // from a request must not reach the Location header raw.
  let header: string;
  try {
    header = location.replace(/[^\x21-\x7e]+/g, (run) => encodeURI(run));
  } catch {
    return { kind: 'refused', failure: badRequest('the redirect target is not a valid URL') };
  }
  return { kind: 'respond', response: { kind: 'redirect', status: 302, location: header } };
}

function downloadFilename(template: Template | null, scope: ExpansionScope): string | null | ResponseDecision {
  if (template === null) return null;
  const name = expand(template, scope);
  if (typeof name !== 'string') return name;
  const refusal = downloadFilenameRefusal(name);
  return refusal === null ? name : { kind: 'refused', failure: badRequest(refusal) };
}

/** A template's value, or why it has none yet; a value of the request that cannot be used is a 400, other errors the service's own (500). */
function expand(template: Template, scope: ExpansionScope, expansion: typeof expandTemplate = expandTemplate): string | ResponseDecision {
  try {
    return expansion(template, scope);
  } catch (error) {
    if (error instanceof MissingValueError) return { kind: 'undecidable', template, reason: error.message };
    return { kind: 'refused', failure: unsafeValueFailure(error, describeError(error)) };
  }
}

function refused(endpoint: Endpoint, failure: ActionFailure, environment: Environment | null): Refused {
  return { kind: 'refused', endpoint, failure, environment };
}

function badRequest(detail: string): ActionFailure {
  return { status: 400, detail, internal: detail };
}

/**
 * 400 naming the parameters whose values cannot be used (an UnsafeValueError that blames them);
 * 500 when the configuration alone is to blame. `internal` is for logs only.
 */
export function unsafeValueFailure(error: unknown, internal: string): ActionFailure {
  if (error instanceof UnsafeValueError) {
    const names = [...new Set(error.culprits.flatMap((p) => (p.kind === 'parameter' ? [p.name] : [])))];
    if (names.length > 0) {
      const errors: ParameterError[] = names.map((name) => ({ parameter: name, detail: `parameter "${name}" ${error.reason}` }));
      const detail = errors.length === 1 ? errors[0]!.detail : `parameters ${names.map((n) => `"${n}"`).join(', ')} together ${error.reason}`;
      return { status: 400, detail, internal, errors };
    }
  }
  return { status: 500, detail: 'the request could not be completed', internal };
}

export function internalFailure(error: unknown): ActionFailure {
  return { status: 500, detail: 'the request could not be completed', internal: describeError(error) };
}

export function systemFor(endpoint: Endpoint, info: RequestInfo, environment: Environment): Record<SystemParameter, string> {
  // A literal rather than a spread of `info`: this runs on every request.
  return systemValues(endpoint, {
    requestId: info.requestId,
    environment,
    clientIp: info.clientIp,
    userAgent: info.userAgent,
    baseUrl: info.baseUrl,
    bodySha256: info.bodySha256 ?? '',
  });
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
