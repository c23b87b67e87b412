// --cors (docs/behaviour.md, "Origins"): the headers that let a page of an allowed origin read
// an answer, the preflight, and which cross-origin requests are refused before anything runs.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServeSettings } from './options.js';
import { writeProblem } from './write-response.js';

export type CorsSetting = ServeSettings['cors'];

/** The methods an endpoint answers, for the preflight and for 405. */
export const ENDPOINT_ALLOW = 'GET, POST';

/** Sets the CORS headers every answer of an endpoint carries; whether `origin` is allowed. */
export function setCorsHeaders(cors: CorsSetting, origin: string | undefined, response: ServerResponse): boolean {
  const allowed = cors !== null && origin !== undefined && (cors === '*' || cors.has(origin));
  // With a list of origins the answer depends on Origin, matching or not: caches must know.
  if (cors !== null && cors !== '*') response.setHeader('vary', 'Origin');
  if (allowed) {
    response.setHeader('access-control-allow-origin', cors === '*' ? '*' : origin);
    response.setHeader('access-control-expose-headers', 'x-request-id');
  }
  return allowed;
}

/** Answers an OPTIONS preflight (with --cors). */
export function answerPreflight(request: IncomingMessage, response: ServerResponse, originAllowed: boolean, requestId: string): void {
  if (!originAllowed) {
    const origin = request.headers.origin;
    return writeProblem(response, 403, origin === undefined ? 'a CORS preflight needs an Origin header' : `origin ${origin} is not allowed`, requestId);
  }
  response.setHeader('access-control-allow-methods', ENDPOINT_ALLOW);
  const requested = request.headers['access-control-request-headers'];
  if (requested !== undefined) response.setHeader('access-control-allow-headers', requested);
  response.setHeader('access-control-max-age', '600');
  response.statusCode = 204;
  response.end();
}

/**
 * A browser sends a cross-origin form post or simple fetch() without asking first, and only
 * hides the answer from the page: the tasks would still run. So with --cors, a request from a
 * page of another origin is refused before anything runs.
 */
export function crossOriginRefused(cors: CorsSetting, origin: string | undefined, originAllowed: boolean, host: string | undefined): origin is string {
  return cors !== null && origin !== undefined && !originAllowed && !sameOrigin(origin, host);
}

/** A page of the service's own host posting to it is not cross-origin, whatever --cors lists. */
function sameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined || origin === 'null') return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}
