// What a request offers parameters with a source, in the runtime's terms (runtime/sources.ts):
// node's headersDistinct (a header sent several times: several values) and the parsed JSON body.
// Each is handed over only to an endpoint that reads it: headersDistinct is built on first use,
// and most requests never need it.

import type { IncomingMessage } from 'node:http';
import type { Endpoint } from '../compiler/ast.js';
import { NO_HEADERS, NO_SOURCES, type JsonBody, type RequestSources } from '../runtime/sources.js';

export function requestSources(request: IncomingMessage, endpoint: Endpoint, json: JsonBody | null): RequestSources {
  // The parsed body is kept only for an endpoint that reads it (several times its bytes, for as long as the request runs).
  const kept = endpoint.readsJsonPaths ? json : null;
  if (!endpoint.readsHeaders && kept === null) return NO_SOURCES;
  return { headers: endpoint.readsHeaders ? request.headersDistinct : NO_HEADERS, json: kept };
}
