// One request to an endpoint, from the moment it is routed to its answer: what every step of
// http.ts (dispatch, each refusal, the body, the webhook checks, the answer) takes, rather than
// the same six values handed from method to method. It is also the request as the runtime asks
// about it (runtime/received.ts, ReceivedRequest): the facts that only node:http and the
// server's settings know (headers as text, the query string, the body's digest, the client's
// address and the base URL), each worked out when asked, so a request that needs none pays for
// none and nothing more is allocated per request.

import type { IncomingMessage } from 'node:http';
import type { Endpoint } from '../compiler/ast.js';
import type { RequestInfo } from '../runtime/decision.js';
import type { LoadedApplication } from '../runtime/loaded.js';
import type { ReceivedRequest } from '../runtime/received.js';
import type { RequestHeaders } from '../runtime/sources.js';
import type { ValueMap } from '../runtime/urlencoded.js';
import type { Span } from '../tracing.js';
import { digestBody } from './body/digest.js';
import type { TrackedResponse } from './http-server.js';
import { requestHeaders } from './request-headers.js';

/** What a request's facts depend on in the server's settings (--trust-proxy, --public-url, --base-path): HttpService. */
export interface RequestOrigin {
  clientIp(request: IncomingMessage): string;
  baseUrl(request: IncomingMessage): string;
}

export class Exchange implements ReceivedRequest {
  /** <deduplicate>: the body's SHA-256 as its bytes arrive (hashBody); null: not taken. */
  private digest: (() => string) | null = null;

  constructor(
    readonly request: IncomingMessage,
    readonly response: TrackedResponse,
    /** The application the request was routed in: a --watch reload meanwhile does not change it. */
    readonly application: LoadedApplication,
    readonly endpoint: Endpoint,
    /** The query string's values, then the form body's. */
    readonly raw: ValueMap,
    readonly requestId: string,
    /**
     * A delivery sent again from the log (docs/deliveries.md, "Replay"): its signature is
     * checked without the timestamp's tolerance; deduplication, rate limits, the honeypot and
     * the CAPTCHA are not applied.
     */
    readonly replay: boolean,
    private readonly origin: RequestOrigin,
  ) {}

  /** Answered already (timed out) or the client gone: nothing more is written. */
  get over(): boolean {
    return this.response.headersSent || this.response.destroyed;
  }

  /** The request's span when tracing is on; NO_SPAN otherwise. */
  get span(): Span {
    return this.response.span;
  }

  /** Starts hashing the body's bytes as they arrive: before its reader takes them. */
  hashBody(): void {
    this.digest = digestBody(this.request);
  }

  bodySha256(): string | null {
    return this.digest === null ? null : this.digest();
  }

  headers(): RequestHeaders | string {
    return requestHeaders(this.request, this.endpoint);
  }

  queryString(): string {
    const url = this.request.url ?? '';
    const question = url.indexOf('?');
    return question < 0 ? '' : url.slice(question + 1);
  }

  info(bodySha256: string): RequestInfo {
    const request = this.request;
    return {
      requestId: this.requestId,
      clientIp: this.origin.clientIp(request),
      userAgent: request.headers['user-agent'] ?? '',
      baseUrl: this.origin.baseUrl(request),
      bodySha256,
    };
  }
}
