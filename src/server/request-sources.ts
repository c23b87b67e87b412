// What a request offers parameters with a source, in the runtime's terms (runtime/sources.ts):
// node's headersDistinct (a header sent several times: several values) and the parsed JSON body.
// Each is handed over only to an endpoint that reads it: headersDistinct is built on first use,
// and most requests never need it.

import type { IncomingMessage } from 'node:http';
import type { Endpoint } from '../compiler/ast.js';
import { NO_HEADERS, NO_SOURCES, type JsonBody, type RequestHeaders, type RequestSources } from '../runtime/sources.js';

/** The sources, or the detail of a 400: a header a parameter reads whose value is not UTF-8. */
export function requestSources(request: IncomingMessage, endpoint: Endpoint, json: JsonBody | null): RequestSources | string {
  // The parsed body is kept only for an endpoint that reads it (several times its bytes, for as long as the request runs).
  const kept = endpoint.readsJsonPaths ? json : null;
  if (!endpoint.readsHeaders && kept === null) return NO_SOURCES;
  if (!endpoint.readsHeaders) return { headers: NO_HEADERS, json: kept };
  const headers = utf8Headers(request.headersDistinct, endpoint);
  return typeof headers === 'string' ? headers : { headers, json: kept };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const BEYOND_ASCII = /[\u0080-\u00ff]/;

/**
 * node reads a header's bytes as Latin-1, one character per byte: `café` sent in UTF-8 arrives as
 * `cafÃ©` and was forwarded so. The headers a parameter reads are read as UTF-8 (what clients
 * send today, RFC 9110 leaving other bytes opaque); bytes that are not UTF-8 are a 400 naming the
 * header, rather than characters nobody sent.
 */
function utf8Headers(distinct: NodeJS.Dict<string[]>, endpoint: Endpoint): RequestHeaders | string {
  let decoded: NodeJS.Dict<string[]> | null = null;
  for (const declaration of endpoint.parameters) {
    if (declaration.source.kind !== 'header') continue;
    const name = declaration.source.header;
    const values = Object.hasOwn(distinct, name) ? distinct[name] : undefined;
    if (values === undefined || !values.some((v) => BEYOND_ASCII.test(v)) || decoded?.[name] !== undefined) continue;
    const texts: string[] = [];
    for (const value of values) {
      try {
        texts.push(BEYOND_ASCII.test(value) ? utf8.decode(Buffer.from(value, 'latin1')) : value);
      } catch {
        return `the ${name} header is not valid UTF-8`;
      }
    }
    decoded ??= { ...distinct };
    decoded[name] = texts;
  }
  return decoded ?? distinct;
}
