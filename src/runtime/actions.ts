// The I/O of a primary action: opening a static file, requesting an upstream. Everything
// else about the response was decided without I/O (decision.ts) or at compile time.

import { open } from 'node:fs/promises';
import { finished } from 'node:stream';
import type { StaticAction, UrlAction } from '../compiler/ast.js';
import { describeError } from '../errors.js';
import { loadGot } from '../tasks/http-request/send.js';
import { gotGuards, OPEN_POLICY, urlRefusal, type OutboundPolicy } from '../tasks/outbound.js';
import type { ActionFailure } from './decision.js';
import type { RuntimeResponse } from './response.js';
import { ATTR, NO_SPAN, setTargetAttributes, type Span } from '../tracing.js';
import { USER_AGENT } from '../user-agent.js';

export type OpenedAction = { readonly ok: true; readonly response: RuntimeResponse } | { readonly ok: false; readonly failure: ActionFailure };

export interface ActionContext {
  /** Upper bound for an upstream of response-from-url (connect to last byte). */
  readonly upstreamTimeoutMs: number;
  /** --allow-task-host and --deny-private-addresses apply to upstreams as to tasks; absent: any. */
  readonly outbound?: OutboundPolicy;
}

/** Opens a decided static response; the server adapter streams it from the handle. */
export async function openStatic(decided: {
  readonly action: StaticAction;
  readonly status: number;
  readonly downloadFilename: string | null;
}): Promise<OpenedAction> {
  const { action, status } = decided;
  let file;
  try {
    file = await open(action.absolutePath, 'r');
  } catch (error) {
    return {
      ok: false,
      failure: { status: 500, detail: 'the response file could not be read', internal: `cannot open static/${action.filename}: ${describeError(error)}` },
    };
  }
  try {
    const stats = await file.stat();
    return {
      ok: true,
      response: { kind: 'file', status, contentType: action.contentType, file, size: stats.size, downloadFilename: decided.downloadFilename },
    };
  } catch (error) {
    await file.close().catch(() => {});
    return {
      ok: false,
      failure: { status: 500, detail: 'the response file could not be read', internal: `cannot read static/${action.filename}: ${describeError(error)}` },
    };
  }
}

/** Requests a decided response-from-url upstream and hands its body on as a stream. */
export async function requestUpstream(
  decided: { readonly action: UrlAction; readonly url: string; readonly status: number | null; readonly downloadFilename: string | null },
  context: ActionContext,
  parent: Span = NO_SPAN,
): Promise<OpenedAction> {
  const { action, url } = decided;
  const span = parent.recording ? upstreamSpan(parent, url) : NO_SPAN;
  // The template as written names the upstream in logs: the expanded URL may carry ${env:...} secrets.
  const shown = action.url.source;
  const failure = (internal: string, code: string): OpenedAction => {
    span.setError(code);
    span.end();
    return { ok: false, failure: { status: 502, detail: 'the upstream server of this endpoint did not answer successfully', internal } };
  };
  const policy = context.outbound ?? OPEN_POLICY;
  // Before any connection, as for tasks. Names are checked when resolved, redirects in a hook.
  const refusal = refusalOf(policy, url);
  if (refusal !== null) return failure(`GET ${shown}: ${refusal}`, 'host-not-allowed');
  // Loaded on first use (see loadGot): most applications never answer from a URL.
  const { default: got } = await loadGot();
  let stream;
  try {
    stream = got.stream(url, {
      throwHttpErrors: false,
      retry: { limit: 0 },
      timeout: { request: context.upstreamTimeoutMs },
      ...gotGuards(policy),
      headers: { 'user-agent': USER_AGENT, ...(span.recording ? traceHeaders(span) : {}) },
    });
  } catch (error) {
    return failure(`GET ${shown}: ${describeError(error)}`, 'invalid-request');
  }
  try {
    const response = await new Promise<{ statusCode: number; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
      stream.once('response', resolve);
      stream.once('error', reject);
    });
    span.setAttribute(ATTR.status, response.statusCode);
    if (response.statusCode < 200 || response.statusCode > 299) {
      stream.destroy();
      return failure(`GET ${shown} answered with status ${response.statusCode}`, String(response.statusCode));
    }
    // Later errors (the upstream breaks off mid-body) are the server adapter's to handle.
    stream.on('error', () => {});
    // The call lasts until its body has been passed on (or broken off).
    if (span.recording) finished(stream, { writable: false }, () => span.end());
    const contentType = response.headers['content-type'];
    return {
      ok: true,
      response: {
        kind: 'stream',
        status: decided.status ?? response.statusCode,
        contentType: typeof contentType === 'string' ? contentType : 'application/octet-stream',
        stream,
        downloadFilename: decided.downloadFilename,
      },
    };
  } catch (error) {
    stream.destroy();
    return failure(`GET ${shown}: ${describeError(error)}`, 'connection');
  }
}

/** Why the policy refuses `url` (a host outside --allow-task-host, an address --deny-private-addresses refuses); null when it does not. */
function refusalOf(policy: OutboundPolicy, url: string): string | null {
  try {
    return urlRefusal(policy, new URL(url));
  } catch {
    // Not a URL: got says so when asked to request it.
    return null;
  }
}

/** The span of a response-from-url call: method and host, never the path or query (they may hold secrets). */
function upstreamSpan(parent: Span, url: string): Span {
  const span = parent.child('response-from-url GET', 'client');
  span.setAttribute(ATTR.method, 'GET');
  try {
    setTargetAttributes(span, new URL(url));
  } catch {
    // An invalid URL fails the call below; the span shows that failure.
  }
  return span;
}

function traceHeaders(span: Span): Record<string, string> {
  const headers: Record<string, string> = {};
  span.inject(headers);
  return headers;
}
