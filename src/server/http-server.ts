// The node:http server as the service sets it up: its timeouts, the response object node makes
// for each request, the HTTP versions it speaks, and the answer to what does not parse as a
// request at all. What a request is answered is decided in http.ts.

import { newRequestId } from './request-id.js';
import { createServer, ServerResponse, STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Endpoint } from '../compiler/ast.js';
import { NO_SPAN, type Span } from '../tracing.js';
import { problemBody } from './write-response.js';
import type { OpenDelivery } from './delivery-log/open-delivery.js';

/** How long the headers of a request may take. */
export const HEADERS_TIMEOUT_MS = 10_000;

export const BAD_VERSION = 'the HTTP version must be HTTP/1.0 or HTTP/1.1';

/** What a response reports to when it closes or its request times out (HttpService). */
export interface ResponseOwner {
  responseClosed(response: TrackedResponse): void;
  timedOut(response: TrackedResponse): void;
}

/**
 * The response of one request, carrying what its log line and metrics need: node creates it
 * (createServer's ServerResponse option), so the hot path allocates no closures for it.
 */
export class TrackedResponse extends ServerResponse {
  service: ResponseOwner | null = null;
  started = 0;
  requestId = '';
  method = '';
  path = '';
  endpoint: Endpoint | undefined = undefined;
  /** NO_SPAN unless tracing is on. */
  span: Span = NO_SPAN;
  /** A request to an endpoint while the delivery log is on; null otherwise. */
  delivery: OpenDelivery | null = null;
}

/** A response's 'close' listener: one function for every response, bound by node to the response. */
export function onResponseClose(this: TrackedResponse): void {
  this.service?.responseClosed(this);
}

/** --request-timeout's timer, given the response as its argument rather than a closure. */
export function onRequestTimeout(response: TrackedResponse): void {
  response.service?.timedOut(response);
}

export type HttpServer = Server<typeof IncomingMessage, typeof TrackedResponse>;

/** The server, handing every request to `handle`; a body declared larger than `maxBodyBytes` is refused before it is sent. */
export function createHttpServer(maxBodyBytes: number, handle: (request: IncomingMessage, response: TrackedResponse) => void): HttpServer {
  const server = createServer<typeof IncomingMessage, typeof TrackedResponse>(
    {
      ServerResponse: TrackedResponse,
      headersTimeout: HEADERS_TIMEOUT_MS,
      // The whole-request limit is ours (a 503); node's own would only cut the connection.
      requestTimeout: 0,
      // How often node checks the headers timeout; its default (30 s) would let 10 s become 40.
      connectionsCheckingInterval: 1000,
    },
    handle,
  );
  server.on('clientError', answerClientError);
  // A client that asks before sending a body it declares too large gets its 413 without
  // sending a byte of it; any other is told to go on.
  server.on('checkContinue', (request: IncomingMessage, response: TrackedResponse) => {
    const length = request.headers['content-length'];
    if (length === undefined || Number(length) <= maxBodyBytes) response.writeContinue();
    handle(request, response);
  });
  return server;
}

/** HTTP/1.0 and HTTP/1.1, the versions this server speaks; any other request is a 400 (SECURITY.md). */
export function spokenVersion(request: IncomingMessage): boolean {
  return request.httpVersionMajor === 1 && (request.httpVersionMinor === 0 || request.httpVersionMinor === 1);
}

export const REPEATED_HOST = 'the request has more than one Host header';

/**
 * Whether the request carries more than one Host header. node keeps the first and drops the
 * others, but a proxy in front may have routed by another: RFC 9112 (3.2) asks for a 400.
 */
export function repeatedHost(request: IncomingMessage): boolean {
  const raw = request.rawHeaders;
  let seen = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

/** A request node could not parse: answered on the socket itself, as there is no response object. */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const requestId = newRequestId();
  const detail = status === 431 ? 'the request headers are too large' : error.code === 'HPE_INVALID_VERSION' ? BAD_VERSION : 'the request is not valid HTTP';
  const body = problemBody(status, detail, requestId);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-type: application/problem+json\r\nx-content-type-options: nosniff\r\nx-request-id: ${requestId}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
