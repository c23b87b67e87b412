// What a request, as the server received it, means to its endpoint: a body that did not parse is
// refused, the sources its parameters read are chosen (the JSON body kept only for an endpoint
// that reads it), the fingerprint and ${body-sha256} of a deduplicated request are made from its
// query and its body's digest, and the request is run (pipeline.ts).
//
// The decision is the runtime's; the facts it is taken on are the transport's. The server hands
// them in through `ReceivedRequest`, which server/exchange.ts implements for node:http: node reads
// header bytes as Latin-1, the client's address and the base URL depend on --trust-proxy and
// --public-url, the body's digest is taken as its bytes arrive. Each is asked for only by an
// endpoint that needs it, and nothing here imports node:http.

import type { Endpoint } from '../compiler/ast.js';
import { RequestUploads } from '../upload.js';
import type { RequestInfo } from './decision.js';
import { requestFingerprint } from './deduplication.js';
import type { RawParameters } from './parameters.js';
import { runRequest, type PipelineContext, type PipelineResult } from './pipeline.js';
import { NO_HEADERS, NO_SOURCES, type JsonBody, type RequestHeaders, type RequestSources } from './sources.js';
import type { Span } from '../tracing.js';

/** What the runtime asks of a request to an endpoint, past the server's own checks and with its body read. */
export interface ReceivedRequest {
  readonly endpoint: Endpoint;
  /** The query string's values, then the form body's. */
  readonly raw: RawParameters;
  readonly span: Span;
  /** A delivery sent again from the log (pipeline.ts, EndpointRequest.replay). */
  readonly replay: boolean;
  /** The headers parameters read, as text; or the detail of a 400 (bytes that are not UTF-8). Asked only by an endpoint that reads a header. */
  headers(): RequestHeaders | string;
  /** The query string as sent, '' without one. Asked only by an endpoint with <deduplicate>. */
  queryString(): string;
  /**
   * SHA-256 (hex) of the body's bytes as received, taken as they arrived; null when no body was
   * read (a GET). Asked once, and only by an endpoint with <deduplicate> (the only one whose body
   * is hashed).
   */
  bodySha256(): string | null;
  /** The request's facts for system parameters, with `bodySha256` as ${body-sha256}. */
  info(bodySha256: string): RequestInfo;
}

/** A request's body as the server read it (server/body/admission.ts). */
export interface ReceivedBody {
  /** Held by the task engine while the request's tasks run. */
  readonly uploads: RequestUploads;
  /** A JSON body, parsed: what parameters with a JSONPath read. */
  readonly json?: JsonBody | undefined;
  /** A kept raw body that does not parse as its type says: refused with this (once the server has checked its <signature>). */
  readonly unparsed?: { readonly status: number; readonly detail: string } | undefined;
}

/** A GET's. */
export const NO_BODY: ReceivedBody = Object.freeze({ uploads: RequestUploads.NONE });

/** A request not run: the server answers it with a problem of this status and detail. */
export interface Refused {
  readonly refused: true;
  readonly status: number;
  readonly detail: string;
}

export type Received = Refused | PipelineResult;

export function isRefused(received: Received): received is Refused {
  return 'refused' in received;
}

/** SHA-256 of no bytes: ${body-sha256} of a GET. */
const EMPTY_BODY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/**
 * Runs a received request, or refuses it. Synchronous whenever the pipeline is (runRequest):
 * a refusal is never a promise.
 */
export function runReceived(context: PipelineContext, request: ReceivedRequest, body: ReceivedBody): Received | Promise<PipelineResult> {
  if (body.unparsed !== undefined) return refused(body.unparsed.status, body.unparsed.detail);
  const endpoint = request.endpoint;
  const sources = sourcesOf(request, endpoint, body.json ?? null);
  if (typeof sources === 'string') return refused(400, sources);
  // Decided at compile time: an endpoint without <deduplicate> hashes nothing, and its ${body-sha256} is ''.
  const deduplicated = endpoint.deduplicate !== null;
  const digest = deduplicated ? request.bodySha256() : null;
  return runRequest(context, {
    endpoint,
    raw: request.raw,
    sources,
    uploads: body.uploads,
    info: request.info(deduplicated ? (digest ?? EMPTY_BODY_SHA256) : ''),
    span: request.span,
    // One shape for every request (no spread on the hot path): undefined without <deduplicate>.
    // A GET's fingerprint is its query's alone.
    fingerprint: deduplicated ? requestFingerprint(request.queryString(), digest ?? '') : undefined,
    replay: request.replay,
  });
}

function refused(status: number, detail: string): Refused {
  return { refused: true, status, detail };
}

/** What the request offers parameters with a source, or the detail of a 400. */
function sourcesOf(request: ReceivedRequest, endpoint: Endpoint, json: JsonBody | null): RequestSources | string {
  // The parsed body is kept only for an endpoint that reads it (several times its bytes, for as long as the request runs).
  const kept = endpoint.readsJsonPaths ? json : null;
  if (!endpoint.readsHeaders) return kept === null ? NO_SOURCES : { headers: NO_HEADERS, json: kept };
  const headers = request.headers();
  return typeof headers === 'string' ? headers : { headers, json: kept };
}
