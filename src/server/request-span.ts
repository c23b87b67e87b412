// A request's server span, with tracing on (serve --otel): started once its endpoint is known,
// ended when its response closes. Off, a response keeps NO_SPAN and neither is called.

import type { IncomingMessage } from 'node:http';
import type { Endpoint } from '../compiler/ast.js';
import { ATTR, type Span, type Tracing } from '../tracing.js';
import type { TrackedResponse } from './http-server.js';

/** Method, route (the endpoint's name) and request id: never the path's query, a header or a parameter. */
export function startServerSpan(tracing: Tracing, request: IncomingMessage, method: string, endpoint: Endpoint | undefined, requestId: string): Span {
  const span = tracing.startServerSpan(endpoint === undefined ? method : `${method} ${endpoint.name}`, request.headers);
  span.setAttribute(ATTR.method, method);
  if (endpoint !== undefined) span.setAttribute(ATTR.route, endpoint.name);
  span.setAttribute(ATTR.requestId, requestId);
  return span;
}

export function endServerSpan(response: TrackedResponse): void {
  const { span, statusCode } = response;
  span.setAttribute(ATTR.status, statusCode);
  if (!response.writableFinished) span.setAttribute(ATTR.aborted, true);
  if (statusCode >= 500) span.setError(String(statusCode));
  span.end();
}
