// An endpoint's responses as a plan shows them (ResponsePlan): each <success> as written, with
// the status known without a request, and the <error> action's answer to a failure. The
// planner (simulate.ts) picks among them for a simulated request and fills in what it expands.

import type { Application, Endpoint, ErrorAction, SuccessAction, SuccessResponse } from '../../compiler/ast.js';
import { actionStatus, type ActionFailure } from '../../runtime/decision.js';
import { expandTemplate, type ExpansionScope } from '../../template/expand.js';
import type { Template } from '../../template/types.js';
import type { PrimaryFailure, ResponsePlan } from './model.js';

/** What the simulated request gets: a response, or a failure and the <error> action's answer. */
export interface Outcome {
  readonly response: ResponsePlan;
  /** A <success> was picked for the simulated request. */
  readonly chosen: boolean;
  readonly note: string | null;
  readonly failure: PrimaryFailure | null;
  /** The response is built after the tasks: they run even when it then fails. */
  readonly deferred: boolean;
}

export function listResponses(application: Application, endpoint: Endpoint): ResponsePlan[] {
  const list = endpoint.successes.map((s) => describeSuccess(application, endpoint, s, null));
  if (!endpoint.successes.some((s) => s.condition === null)) {
    list.push({ kind: 'empty', status: 200, summary: 'empty', expanded: null, condition: null, line: null, waitsFor: [] });
  }
  return list;
}

export function describeSuccess(application: Application, endpoint: Endpoint, success: SuccessResponse, expanded: string | null): ResponsePlan {
  return {
    kind: success.action.kind,
    status: staticStatus(application, success.action, new Set([endpoint.name])),
    summary: summarize(success.action),
    expanded,
    condition: success.condition?.text ?? null,
    line: success.position.line > 0 ? success.position.line : null,
    // The compiler merged <after> and the producers of the inputs.
    waitsFor: endpoint.tasksMode === 'wait' ? success.after : [],
  };
}

/** The status known without I/O and without a request: a forward follows its target's fallback. */
export function staticStatus(application: Application, action: SuccessAction, visited: Set<string>): number | null {
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

export function summarize(action: SuccessAction | ErrorAction): string {
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
      return (
        `forward to endpoint ${action.endpoint}` +
        (action.inputParameters === null ? '' : ` with ${action.inputParameters.map((p) => `${p.name}=${p.value.source}`).join(', ')}`)
      );
    case 'body':
      return `body (${action.contentType})`;
  }
}

function download(template: Template | null): string {
  return template === null ? '' : `, download as ${template.source}`;
}

export function describeInner(response: ResponsePlan): string {
  const expanded = response.expanded;
  return expanded === null || response.summary.includes(expanded) ? response.summary : `${response.summary} → ${expanded}`;
}

/** What the response would hold or point to, secrets masked. */
export function shownTarget(action: SuccessAction, shown: ExpansionScope): string | null {
  switch (action.kind) {
    case 'redirect':
      return expandTemplate(action.url, shown);
    case 'url':
      return (
        `GET ${expandTemplate(action.url, shown)}` + (action.downloadFilename === null ? '' : `, download as ${expandTemplate(action.downloadFilename, shown)}`)
      );
    case 'static':
      return action.downloadFilename === null ? null : `download as ${expandTemplate(action.downloadFilename, shown)}`;
    case 'body':
      return expandTemplate(action.body, shown);
    case 'empty':
    case 'forward':
      return null;
  }
}

/** A request the primary action refuses: the <error> action answers (`deferred`: after the tasks ran). */
export function refusedOutcome(endpoint: Endpoint, refusal: ActionFailure, deferred = false): Outcome {
  const failure = { detail: refusal.detail, status: refusal.status, endpoint: endpoint.name };
  return { response: errorResponse(endpoint, failure.status), chosen: false, note: null, failure, deferred };
}

/** The <error> action's answer to a failure, with the status serve gives it. */
function errorResponse(endpoint: Endpoint, failureStatus: number): ResponsePlan {
  const action = endpoint.error.action;
  return {
    kind: action.kind,
    status: actionStatus(action, failureStatus),
    summary: action.kind === 'empty' ? 'problem details (application/problem+json)' : `<error>: ${summarize(action)}`,
    expanded: null,
    condition: null,
    line: endpoint.error.position?.line ?? null,
    waitsFor: [],
  };
}
