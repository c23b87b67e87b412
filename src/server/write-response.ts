// Writing an answer on node:http: a RuntimeResponse of the pipeline, a body of the service's
// own (health, metrics, challenges) or a problem (RFC 9457 problem+json, or a page for a
// browser's navigation: error-page.ts).

import { STATUS_CODES, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import type { RuntimeResponse } from '../runtime/response.js';
import type { ParameterError } from '../runtime/parameters.js';
import { ERROR_PAGE_HEADERS, errorPage, prefersHtml, sameOriginReferer } from './error-page.js';
import type { OpenDelivery } from './delivery-log/open-delivery.js';

/** What a page leaves out for its visitor (the detail, each parameter's): for the operator's log. */
export interface PageDetail {
  readonly requestId: string;
  readonly status: number;
  readonly detail: string;
  readonly errors?: readonly ParameterError[];
}

let pageDetailSink: ((detail: PageDetail) => void) | null = null;

/** Where the detail a page leaves out goes: the process's log (serving.ts), once per process. */
export function logPageDetailsTo(sink: (detail: PageDetail) => void): void {
  pageDetailSink = sink;
}

export function problemBody(status: number, detail: string, requestId: string, errors?: readonly ParameterError[]): string {
  const body = { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail, requestId };
  return JSON.stringify(errors === undefined ? body : { ...body, errors });
}

/**
 * problem+json, or for a browser's navigation a page for the visitor (server/error-page.ts),
 * whose developer detail goes to the log instead.
 */
export function writeProblem(response: ServerResponse, status: number, detail: string, requestId: string, errors?: readonly ParameterError[]): void {
  // Every problem is answered here: the delivery log's reason is what the client was told.
  const delivery = (response as { delivery?: OpenDelivery | null }).delivery;
  if (delivery != null) delivery.reason = detail;
  if (prefersHtml(response.req)) {
    pageDetailSink?.({ requestId, status, detail, ...(errors !== undefined ? { errors } : {}) });
    for (const [name, value] of Object.entries(ERROR_PAGE_HEADERS)) response.setHeader(name, value);
    writeBody(response, status, 'text/html; charset=utf-8', errorPage(status, requestId, errors, sameOriginReferer(response.req)));
    return;
  }
  writeBody(response, status, 'application/problem+json', problemBody(status, detail, requestId, errors));
}

export function writeBody(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.statusCode = status;
  response.setHeader('content-type', contentType);
  response.setHeader('content-length', Buffer.byteLength(body));
  response.end(body);
}

/** A 405 naming the methods `allow`ed, for the response of a request given its id. */
export function methodNotAllowed(response: ServerResponse & { readonly requestId: string }, allow: string): void {
  response.setHeader('allow', allow);
  writeProblem(response, 405, `the method must be ${allow.replace(', ', ' or ')}`, response.requestId);
}

/** A path or origin as a problem's detail quotes it: at most 100 characters. */
export function truncatePath(path: string): string {
  return path.length > 100 ? `${path.slice(0, 97)}...` : path;
}

/** Synchronous for an answer held in memory; a promise while a file or stream is sent. */
export function writeResponse(response: ServerResponse, answer: RuntimeResponse, requestId: string): Promise<void> | void {
  switch (answer.kind) {
    case 'empty':
      response.statusCode = answer.status;
      response.setHeader('content-length', 0);
      response.end();
      return;
    case 'redirect':
      response.statusCode = answer.status;
      response.setHeader('location', answer.location);
      response.setHeader('content-length', 0);
      response.end();
      return;
    case 'body':
      writeBody(response, answer.status, answer.contentType, answer.body);
      return;
    case 'replay': {
      const remembered = answer.answer;
      response.statusCode = remembered.status;
      response.setHeader('idempotent-replayed', 'true');
      if (remembered.location !== null) response.setHeader('location', remembered.location);
      if (remembered.contentType !== null) response.setHeader('content-type', remembered.contentType);
      response.setHeader('content-length', Buffer.byteLength(remembered.body));
      response.end(remembered.body);
      return;
    }
    case 'problem':
      if (answer.headers !== undefined) for (const name in answer.headers) response.setHeader(name, answer.headers[name]!);
      writeProblem(response, answer.status, answer.detail, requestId, answer.errors);
      return;
    case 'file': {
      response.statusCode = answer.status;
      response.setHeader('content-type', answer.contentType);
      response.setHeader('content-length', answer.size);
      if (answer.downloadFilename !== null) response.setHeader('content-disposition', `attachment; filename="${answer.downloadFilename}"`);
      if (answer.size === 0) {
        answer.file.close().catch(() => {});
        response.end();
        return;
      }
      // Read exactly the announced bytes: the stream then ends in the same tick as its last
      // chunk, so the response is ended along with its last byte. Without `end`, the end of
      // the file is found by one more read, and a client that already has every byte of the
      // Content-Length may close before it: the response was then closed unended, and logged
      // aborted although it was delivered.
      return stream(answer.file.createReadStream({ start: 0, end: answer.size - 1 }), response);
    }
    case 'stream':
      response.statusCode = answer.status;
      response.setHeader('content-type', answer.contentType);
      if (answer.downloadFilename !== null) response.setHeader('content-disposition', `attachment; filename="${answer.downloadFilename}"`);
      return stream(answer.stream, response);
  }
}

function stream(source: NodeJS.ReadableStream, response: ServerResponse): Promise<void> {
  // A source that breaks off mid-body leaves the client a truncated answer: the connection
  // is cut so the client sees the failure instead of a short body.
  return new Promise((resolve) => pipeline(source, response, () => resolve()));
}
