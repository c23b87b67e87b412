// One request to an endpoint, from the moment it is routed to its answer: what every step of
// http.ts (dispatch, each refusal, the body, the webhook checks, the answer) takes, rather than
// the same six values handed from method to method.

import type { IncomingMessage } from 'node:http';
import type { Endpoint } from '../compiler/ast.js';
import type { LoadedApplication } from '../runtime/loaded.js';
import type { ValueMap } from '../runtime/urlencoded.js';
import type { TrackedResponse } from './http-server.js';

export class Exchange {
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
  ) {}

  /** Answered already (timed out) or the client gone: nothing more is written. */
  get over(): boolean {
    return this.response.headersSent || this.response.destroyed;
  }
}
