// Sends a PreparedHttpRequest. got does the wire work (redirects, timeouts, decompression);
// retries follow the shared policy (../retry.ts), because got's built-in retry would hide the
// attempt count and use a policy of its own.

import type { Agents, Got, Options } from 'got';
import { USER_AGENT } from '../../user-agent.js';
import { TaskError } from '../errors.js';
import { parseRetryAfter, withRetries } from '../retry.js';
import {
  CrossOriginRedirectError,
  crossOriginRedirectOf,
  crossOriginRefusal,
  gotGuards,
  isPolicyRefusal,
  OPEN_POLICY,
  urlRefusal,
  type OutboundPolicy,
} from '../outbound.js';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { signAttempt } from './sign.js';
import type { Readable } from 'node:stream';
import type { PreparedHttpRequest } from './types.js';
import { ATTR, setTargetAttributes, type Span } from '../../tracing.js';

/** A successful (2xx) answer, body read in full. */
export interface HttpAnswer {
  readonly status: number;
  /** Lower-case names, as node:http gives them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
  readonly attempts: number;
}

export interface SendOptions {
  /** Per attempt, from the first byte sent to the last byte of the answer read. */
  readonly timeoutMs: number;
  /** Extra attempts after the first. */
  readonly retries: number;
  /** The task's span when tracing is on: each attempt is a child, whose traceparent the request carries. */
  readonly span?: Span | undefined;
}

/** Bounds memory per answer: a misbehaving upstream cannot exhaust the process. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
export const MAX_REDIRECTS = 5;

// The codes got itself treats as transient; TLS and protocol errors are not in it on purpose:
// repeating them only delays the failure.
const TRANSIENT_CODES = new Set([
  'ETIMEDOUT',
  'ECONNRESET',
  'EADDRINUSE',
  'ECONNREFUSED',
  'EPIPE',
  'ENOTFOUND',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ECONNABORTED',
]);

type GotModule = typeof import('got');
let gotModule: Promise<GotModule> | undefined;

/**
 * got is loaded on first use, not when the module is: with its dependencies it is the largest
 * part of what `serve` would otherwise load before its ready line (docs/performance.md,
 * "Libraries loaded on first use"), and only requests with an HttpRequest task or a
 * response-from-url need it.
 */
export function loadGot(): Promise<GotModule> {
  return (gotModule ??= import('got'));
}

/** got's instance for this client and got's module (its error classes), once loaded. */
interface LoadedGot {
  readonly got: Got;
  readonly errors: GotModule;
}

/**
 * What a request hands the redirect hook as got's `context`: the prepared request (its headers
 * are the task's own) and its URL. The hook itself is made once per client, so a request builds
 * no hook, no array for it, nor a closure (docs/performance.md, "The HTTP client").
 */
// A type, not an interface: got's `context` takes only what has an index signature.
type RedirectContext = {
  readonly taskRequest: PreparedHttpRequest;
  readonly taskUrl: URL;
};

/**
 * One client per process: keeps connections alive across requests. got is created on the first
 * request; what every request shares (the redirect hook, each timeout's object) is made once.
 */
export class HttpClient {
  private loading: Promise<LoadedGot> | undefined;
  /** Set once got is loaded: a request then starts without waiting on a promise for it. */
  loaded: LoadedGot | undefined;
  private readonly timeouts = new Map<number, { readonly request: number }>();

  constructor(
    private readonly agent: Agents | undefined,
    /** serve --allow-task-host and --deny-private-addresses: where requests and their redirects may go. */
    readonly policy: OutboundPolicy = OPEN_POLICY,
  ) {}

  load(): Promise<LoadedGot> {
    return (this.loading ??= loadGot().then((errors) => {
      const guards = gotGuards(this.policy);
      const got = errors.default.extend({
        retry: { limit: 0 },
        throwHttpErrors: false,
        followRedirect: true,
        maxRedirects: MAX_REDIRECTS,
        decompress: true,
        // A task's own User-Agent header replaces it (headers given per request win).
        headers: { 'user-agent': USER_AGENT },
        ...(this.agent !== undefined ? { agent: this.agent } : {}),
        // The first URL is checked before the request (attemptOnce); each redirect in a hook,
        // and every address a name resolves to in the lookup of the connection itself.
        ...guards,
        hooks: { beforeRedirect: [...(guards.hooks?.beforeRedirect ?? []), originGuard(this.policy)] },
      });
      return (this.loaded = { got, errors });
    }));
  }

  /** got's `timeout` option for `ms`: the same object for every request with that timeout (got copies it). */
  timeout(ms: number): { readonly request: number } {
    let timeout = this.timeouts.get(ms);
    if (timeout === undefined) this.timeouts.set(ms, (timeout = { request: ms }));
    return timeout;
  }
}

export function createHttpClient(options: { readonly agent?: Agents; readonly policy?: OutboundPolicy } = {}): HttpClient {
  return new HttpClient(options.agent, options.policy);
}

type AttemptResult =
  | { readonly kind: 'answer'; readonly status: number; readonly statusMessage: string; readonly headers: HttpAnswer['headers']; readonly body: Buffer }
  | { readonly kind: 'error'; readonly error: TaskError };

/** Sends the request, retrying transient failures; a failure is a TaskError with its attempt count. */
export async function sendHttpRequest(client: HttpClient, request: PreparedHttpRequest, options: SendOptions): Promise<HttpAnswer> {
  const loaded = client.loaded ?? (await client.load());
  // <sign>: the bytes are signed as sent, each attempt with its own send time.
  const signed = request.signing === null ? null : { signing: request.signing, bytes: await bodyBytes(request.body) };
  const { value, attempts } = await withRetries(
    async (_n, span) => {
      const sent = signed === null ? request : { ...request, headers: { ...request.headers, ...signAttempt(signed.signing, Date.now(), signed.bytes) } };
      const result = await attemptOnce(client, loaded, sent, options.timeoutMs, span);
      if (result.kind === 'answer') span.setAttribute(ATTR.status, result.status);
      // The target is described only for a failure: an answer never needs it.
      if (result.kind === 'error')
        throw new TaskError(`${describeTarget(request)} failed: ${result.error.message}`, {
          code: result.error.code,
          transient: result.error.transient,
          cause: result.error,
        });
      if (result.status < 200 || result.status > 299) {
        const transient = result.status === 429 || result.status >= 500;
        throw new TaskError(`${describeTarget(request)} answered ${result.status}${result.statusMessage ? ' ' + result.statusMessage : ''}`, {
          code: 'http-status',
          transient,
          retryAfterMs: transient ? parseRetryAfter(result.headers['retry-after']) : null,
        });
      }
      return result;
    },
    { retries: options.retries, span: options.span },
  );
  return { status: value.status, headers: value.headers, body: value.body, attempts };
}

/** Method and URL without query string or credentials: either may hold a secret, and this text reaches logs. */
export function describeTarget(request: Pick<PreparedHttpRequest, 'method' | 'url'>): string {
  try {
    const url = new URL(request.url);
    return `${request.method} ${url.origin}${url.pathname}`;
  } catch {
    return `${request.method} (invalid URL)`;
  }
}

function attemptOnce(client: HttpClient, { got, errors }: LoadedGot, request: PreparedHttpRequest, timeoutMs: number, span: Span): Promise<AttemptResult> {
  const { policy } = client;
  return new Promise<AttemptResult>((resolve) => {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      resolve(failed('invalid URL', 'invalid-request'));
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      resolve(failed(`unsupported URL scheme ${url.protocol}`, 'invalid-request'));
      return;
    }
    // Before any connection: a refused host never sees the request, not even its DNS lookup;
    // nor does an address --deny-private-addresses refuses.
    const refusal = urlRefusal(policy, url);
    if (refusal !== null) {
      resolve(failed(refusal, 'host-not-allowed'));
      return;
    }
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    // got copies the headers it is given, so the prepared ones are handed over as they are,
    // unless this attempt adds one (a traceparent, the length of a body read from a file).
    const fromFile = request.body !== null && typeof request.body !== 'string' && request.body.source.kind === 'file';
    const sent: Record<string, string | string[] | undefined> = span.recording || fromFile ? { ...request.headers } : request.headers;
    if (span.recording) {
      span.setAttribute(ATTR.method, request.method);
      setTargetAttributes(span, url);
      // The upstream's own spans then join this trace, under this attempt.
      span.inject(sent);
    }
    const body = wireBody(request.body, sent);
    const context: RedirectContext = { taskRequest: request, taskUrl: url };
    const stream = got.stream(url, {
      method: request.method as 'GET',
      headers: sent,
      ...(body !== null ? { body } : {}),
      timeout: client.timeout(timeoutMs),
      context,
    });
    // In stream mode got waits for a request body on methods that may carry one; without a
    // prepared body the request must be ended here or it never leaves.
    if (request.body === null && request.method !== 'GET' && request.method !== 'HEAD') stream.end();
    const chunks: Buffer[] = [];
    let received = 0;
    let status = 0;
    let statusMessage = '';
    let headers: HttpAnswer['headers'] = {};
    stream.on('response', (response: { statusCode: number; statusMessage?: string; headers: HttpAnswer['headers'] }) => {
      status = response.statusCode;
      statusMessage = response.statusMessage ?? '';
      headers = response.headers;
      const declared = Number(headers['content-length']);
      // Decompression can still grow the body, so the byte count below is the real guard;
      // this one only fails early when the upstream says up front that it is too large.
      if (Number.isFinite(declared) && declared > MAX_RESPONSE_BYTES && headers['content-encoding'] === undefined) {
        finish(failed(tooLarge(), 'response-too-large'));
        stream.destroy();
      }
    });
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_RESPONSE_BYTES) {
        finish(failed(tooLarge(), 'response-too-large'));
        stream.destroy();
        return;
      }
      chunks.push(chunk);
    });
    stream.on('end', () => {
      finish({ kind: 'answer', status, statusMessage, headers, body: Buffer.concat(chunks, received) });
    });
    stream.on('error', (error: Error) => {
      finish(classify(error, errors, timeoutMs));
    });
  });
}

/**
 * What got sends for a prepared body. A forwarded body kept in a temporary file is streamed
 * from it, a new stream per attempt, with its length declared (no chunked encoding: the peer
 * gets the bytes as the client sent them, framed the same way).
 */
function wireBody(body: PreparedHttpRequest['body'], headers: Record<string, string | string[] | undefined>): string | Buffer | Readable | null {
  if (body === null || typeof body === 'string') return body;
  if (body.source.kind === 'buffer') return body.source.content;
  headers['content-length'] = String(body.size);
  return createReadStream(body.source.path);
}

/** The exact bytes a prepared body sends. */
async function bodyBytes(body: PreparedHttpRequest['body']): Promise<Buffer> {
  if (body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return body.source.kind === 'buffer' ? body.source.content : readFile(body.source.path);
}

/**
 * Headers that describe the body and the operation rather than anyone's credentials: they go on
 * with a redirect to another origin that --allow-task-host lets through. Every other header of
 * the task (its request-headers, basic authentication) was written for the origin of its URL.
 */
const KEPT_ACROSS_ORIGINS: ReadonlySet<string> = new Set(['content-type', 'idempotency-key']);

/**
 * got's beforeRedirect hook, one per client: a redirect to another origin than the task's URL is
 * refused (crossOriginRefusal), or, when --allow-task-host names its host, followed without the
 * task's own headers; once dropped they stay dropped for the rest of the chain. The request and
 * its URL come with each request, in got's `context` (RedirectContext).
 */
function originGuard(policy: OutboundPolicy): (next: Pick<Options, 'url' | 'headers' | 'context'>) => void {
  return (next) => {
    const { taskRequest: request, taskUrl: origin } = next.context as unknown as RedirectContext;
    const to = new URL(String(next.url));
    if (to.origin === origin.origin) return;
    const refusal = crossOriginRefusal(policy, origin, to);
    if (refusal !== null) throw new CrossOriginRedirectError(refusal);
    for (const name of Object.keys(request.headers)) if (!KEPT_ACROSS_ORIGINS.has(name)) delete next.headers[name];
  };
}

function failed(message: string, code: TaskError['code'], transient = false): AttemptResult {
  return { kind: 'error', error: new TaskError(message, { code, transient }) };
}

function tooLarge(): string {
  return `the answer is larger than ${MAX_RESPONSE_BYTES / (1024 * 1024)} MiB`;
}

/** `errors`: got's module, whose error classes tell the failures apart. */
function classify(error: Error, { TimeoutError, MaxRedirectsError, RequestError }: GotModule, timeoutMs: number): AttemptResult {
  if (error instanceof TimeoutError) {
    return failed(`no complete answer within ${formatMs(timeoutMs)}`, 'timeout', true);
  }
  if (error instanceof MaxRedirectsError) {
    return failed(`more than ${MAX_REDIRECTS} redirects`, 'too-many-redirects');
  }
  if (isPolicyRefusal(error)) {
    return failed(error.message, 'host-not-allowed');
  }
  const crossOrigin = crossOriginRedirectOf(error);
  if (crossOrigin !== null) return failed(crossOrigin.message, 'cross-origin-redirect');
  const code = error instanceof RequestError ? error.code : (error as NodeJS.ErrnoException).code;
  const transient = code !== undefined && TRANSIENT_CODES.has(code);
  // got's messages name the host and port, which the log may hold; never the request headers.
  const message = code !== undefined && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
  return failed(message, 'connection', transient);
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
