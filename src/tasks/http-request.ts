// Sends a PreparedHttpRequest. got does the wire work (redirects, timeouts, decompression);
// retries are ours, because the policy (full jitter, a Retry-After cap, which failures count
// as transient) is part of the contract and got's built-in retry would hide the attempt count.

import { setTimeout as sleep } from 'node:timers/promises';
import type { Agents, Got } from 'got';
import { HostNotAllowedError, hostRefusal, type HostAllowlist } from './host-allowlist.js';
import type { PreparedHttpRequest } from './prepared.js';

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
}

/** A task failure with the attempt count, so the outcome can report it. */
export class HttpTaskError extends Error {
  override readonly name = 'HttpTaskError';
  constructor(
    message: string,
    readonly attempts: number,
  ) {
    super(message);
  }
}

/** Bounds memory per answer: a misbehaving upstream cannot exhaust the process. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
export const MAX_REDIRECTS = 5;
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 5_000;
const MAX_RETRY_AFTER_MS = 5_000;

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
 * part of what `serve` would otherwise load before its ready line (bench P5), and only
 * requests with an HttpRequest task or a response-from-url need it.
 */
export function loadGot(): Promise<GotModule> {
  return (gotModule ??= import('got'));
}

/** One client per process: keeps connections alive across requests. got is created on the first request. */
export class HttpClient {
  private instance: Promise<Got> | undefined;

  constructor(
    private readonly agent: Agents | undefined,
    /** serve --allow-task-host: the hosts requests and their redirects may go to; null: any. */
    readonly allowedHosts: HostAllowlist | null = null,
  ) {}

  got(): Promise<Got> {
    return (this.instance ??= loadGot().then(({ default: got }) =>
      got.extend({
        retry: { limit: 0 },
        throwHttpErrors: false,
        followRedirect: true,
        maxRedirects: MAX_REDIRECTS,
        decompress: true,
        ...(this.agent !== undefined ? { agent: this.agent } : {}),
        // The first URL is checked before the request (attemptOnce); a redirect must not lead elsewhere either.
        ...(this.allowedHosts !== null ? { hooks: { beforeRedirect: [(next: { url?: string | URL }) => this.checkRedirect(next)] } } : {}),
      }),
    ));
  }

  private checkRedirect(next: { url?: string | URL }): void {
    const refusal = this.allowedHosts === null ? null : hostRefusal(this.allowedHosts, new URL(String(next.url)));
    if (refusal !== null) throw new HostNotAllowedError(`redirect refused: ${refusal}`);
  }
}

export function createHttpClient(options: { readonly agent?: Agents; readonly allowedHosts?: HostAllowlist | null } = {}): HttpClient {
  return new HttpClient(options.agent, options.allowedHosts ?? null);
}

type AttemptResult =
  | { readonly kind: 'answer'; readonly status: number; readonly statusMessage: string; readonly headers: HttpAnswer['headers']; readonly body: Buffer }
  | { readonly kind: 'error'; readonly message: string; readonly transient: boolean };

export async function sendHttpRequest(
  client: HttpClient,
  request: PreparedHttpRequest,
  options: SendOptions,
): Promise<HttpAnswer> {
  const target = describeTarget(request);
  const maxAttempts = 1 + Math.max(0, options.retries);
  const [got, errors] = await Promise.all([client.got(), loadGot()]);
  for (let attempt = 1; ; attempt++) {
    const result = await attemptOnce(got, errors, request, options.timeoutMs, client.allowedHosts);
    let failure: string;
    let transient: boolean;
    let retryAfterMs: number | null = null;
    if (result.kind === 'answer') {
      if (result.status >= 200 && result.status < 300) {
        return { status: result.status, headers: result.headers, body: result.body, attempts: attempt };
      }
      failure = `${target} answered ${result.status}${result.statusMessage ? ' ' + result.statusMessage : ''}`;
      transient = result.status === 429 || result.status >= 500;
      retryAfterMs = transient ? parseRetryAfter(result.headers['retry-after']) : null;
    } else {
      failure = `${target} failed: ${result.message}`;
      transient = result.transient;
    }
    const tried = attempt === 1 ? '' : ` (after ${attempt} attempts)`;
    if (!transient || attempt >= maxAttempts) throw new HttpTaskError(failure + tried, attempt);
    let waitMs: number;
    if (retryAfterMs !== null) {
      // A server that asks for a longer pause than we are willing to wait gets none of our
      // retries: hammering it earlier than it asked would be worse than failing.
      if (retryAfterMs > MAX_RETRY_AFTER_MS) {
        throw new HttpTaskError(
          `${failure}${tried}; not retried: Retry-After asks for ${Math.ceil(retryAfterMs / 1000)} s, more than the ${MAX_RETRY_AFTER_MS / 1000} s this service waits`,
          attempt,
        );
      }
      waitMs = retryAfterMs;
    } else {
      waitMs = backoffMs(attempt);
    }
    await sleep(waitMs);
  }
}

/** Full jitter: a uniform wait in [0, min(cap, first * 2^(n-1))] before retry n. */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (retry - 1));
  return Math.floor(random() * ceiling);
}

/** Seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return null;
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
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

function attemptOnce(client: Got, errors: GotModule, request: PreparedHttpRequest, timeoutMs: number, allowedHosts: HostAllowlist | null): Promise<AttemptResult> {
  return new Promise<AttemptResult>((resolve) => {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      resolve({ kind: 'error', message: `invalid URL`, transient: false });
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      resolve({ kind: 'error', message: `unsupported URL scheme ${url.protocol}`, transient: false });
      return;
    }
    // Before any connection: a refused host never sees the request, not even its DNS lookup.
    const refusal = allowedHosts === null ? null : hostRefusal(allowedHosts, url);
    if (refusal !== null) {
      resolve({ kind: 'error', message: refusal, transient: false });
      return;
    }
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const stream = client.stream(url, {
      method: request.method as 'GET',
      headers: { ...request.headers },
      ...(request.body !== null ? { body: request.body } : {}),
      timeout: { request: timeoutMs },
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
        finish({ kind: 'error', message: tooLarge(), transient: false });
        stream.destroy();
      }
    });
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_RESPONSE_BYTES) {
        finish({ kind: 'error', message: tooLarge(), transient: false });
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

function tooLarge(): string {
  return `the answer is larger than ${MAX_RESPONSE_BYTES / (1024 * 1024)} MiB`;
}

/** `errors`: got's module, whose error classes tell the failures apart. */
function classify(error: Error, { TimeoutError, MaxRedirectsError, RequestError }: GotModule, timeoutMs: number): AttemptResult {
  if (error instanceof TimeoutError) {
    return { kind: 'error', message: `no complete answer within ${formatMs(timeoutMs)}`, transient: true };
  }
  if (error instanceof MaxRedirectsError) {
    return { kind: 'error', message: `more than ${MAX_REDIRECTS} redirects`, transient: false };
  }
  const code = error instanceof RequestError ? error.code : (error as NodeJS.ErrnoException).code;
  const transient = code !== undefined && TRANSIENT_CODES.has(code);
  // got's messages name the host and port, which the log may hold; never the request headers.
  return { kind: 'error', message: code !== undefined && !error.message.includes(code) ? `${error.message} (${code})` : error.message, transient };
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
