// The request headers parameters read (a parameter with a header source, runtime/sources.ts), as
// text: node reads a header's bytes as Latin-1, which the runtime cannot know. Built from node's
// headersDistinct (a header sent several times: several values), which node makes on first use:
// only an endpoint that reads a header asks (runtime/received.ts).

import type { IncomingMessage } from 'node:http';
import type { Endpoint } from '../compiler/ast.js';
import type { RequestHeaders } from '../runtime/sources.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const BEYOND_ASCII = /[\u0080-\u00ff]/;

/**
 * node reads a header's bytes as Latin-1, one character per byte: `café` sent in UTF-8 arrives as
 * `cafÃ©` and was forwarded so. The headers a parameter reads are read as UTF-8 (what clients
 * send today, RFC 9110 leaving other bytes opaque); bytes that are not UTF-8 are a 400 naming the
 * header, rather than characters nobody sent. Returns the headers, or the detail of that 400.
 */
export function requestHeaders(request: IncomingMessage, endpoint: Endpoint): RequestHeaders | string {
  const distinct = request.headersDistinct;
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
