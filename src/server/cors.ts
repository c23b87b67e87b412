// --cors (docs/behaviour.md, "Origins"): the headers that let a page of an allowed origin read
// an answer, the preflight, and which cross-origin requests are refused before anything runs.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PublicUrl, ServeSettings } from './options.js';
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
export function crossOriginRefused(
  cors: CorsSetting,
  origin: string | undefined,
  originAllowed: boolean,
  host: string | undefined,
  publicUrl: PublicUrl | null,
): origin is string {
  return cors !== null && origin !== undefined && !originAllowed && !sameOrigin(origin, host, publicUrl);
}

/**
 * A page of the service itself posting to it is not cross-origin, whatever --cors lists. With
 * --public-url the service knows its origin and compares scheme, host and port with it. Without,
 * it has only the Host header, which the page's browser sent, so a page whose name resolves to
 * the service (DNS rebinding) passes: the scheme must at least be http, the one the service
 * speaks, and the ports are compared as browsers write them (no :80).
 */
function sameOrigin(origin: string, host: string | undefined, publicUrl: PublicUrl | null): boolean {
  const page = originOf(origin);
  if (page === null) return false;
  if (publicUrl !== null) return page === publicUrl.origin;
  if (host === undefined || !HOST.test(host)) return false;
  return page === originOf(`http://${host}`);
}

/** A Host header as a host and an optional port, nothing that would make a URL of more. */
const HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** Scheme, host and port as browsers serialise them (lower case, no default port); null for `null` or no http(s) origin. */
function originOf(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : null;
}
