// The node:http adapter: routes a request, applies its limits, reads its body and hands it to
// the runtime (runtime/received.ts), which decides what the request means and runs it. The server
// itself is set up in http-server.ts, the probes answered in probes.ts, CORS is in cors.ts,
// writing an answer in write-response.ts, reading a body in body/admission.ts, what the runtime
// asks of a request in exchange.ts. Nothing here knows about actions or tasks; the runtime
// decides, this file only speaks HTTP.

import { newRequestId } from './request-id.js';
import type { IncomingMessage } from 'node:http';
import type { PipelineResult } from '../runtime/pipeline.js';
import { isRefused, NO_BODY, runReceived, type Received } from '../runtime/received.js';
import { discardResponse } from '../runtime/response.js';
import { parseUrlEncoded, type ValueMap } from '../runtime/urlencoded.js';
import { jsonPathsOf } from './body/json-thread.js';
import { describeError } from '../errors.js';
import { readBody } from './body/admission.js';
import type { BodyIntake } from './body/intake.js';
import { answerPreflight, crossOriginRefused, ENDPOINT_ALLOW, setCorsHeaders } from './cors.js';
import { methodNotAllowed, truncatePath, writeProblem, writeResponse } from './write-response.js';
import type { LoadedApplication } from '../runtime/loaded.js';
import type { Guards, LimitExceeded } from '../runtime/guards.js';
import type { Logger } from './log.js';
import type { ServiceMetrics } from './metrics.js';
import { type ServeSettings } from './options.js';
import { formatDuration } from '../units.js';
import { NO_TRACING, type Tracing } from '../tracing.js';
import { compileTrust, forwardedClientIp, socketAddress, type TrustFunction } from './client-ip.js';
import { answerWebhook, checkWebhook, rawBytes } from './webhooks.js';
import {
  BAD_VERSION,
  REPEATED_HOST,
  createHttpServer,
  onRequestTimeout,
  onResponseClose,
  repeatedHost,
  spokenVersion,
  type HttpServer,
  type TrackedResponse,
} from './http-server.js';
import { answerHealth, answerMetrics, answerReady, PROBE_ALLOW } from './probes.js';
import { endServerSpan, startServerSpan } from './request-span.js';
import { discardRestOfBody } from './body/linger.js';
import { answerAltchaChallenge } from './altcha-challenge.js';
import { Exchange, type RequestOrigin } from './exchange.js';
import type { DeliveryRecording } from './delivery-log/recording.js';
import type { ReplayGate } from './delivery-log/replay-gate.js';

export interface HttpServerState {
  /** The application new requests are served by; replaced on a --watch reload. */
  current: LoadedApplication;
  shuttingDown: boolean;
  /** serve --queue: whether its store answers, for /_health (a store that is down does not make the instance unhealthy) and /_ready (it makes it unready). */
  readonly queue?: { readonly up: boolean } | null;
}

/** A GET's body, for its <signature>. */
const NO_BYTES = Buffer.alloc(0);
/** Hosts as they appear in a Host header; anything else falls back to the listening address. */
const SAFE_HOST = /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

export class HttpService implements RequestOrigin {
  readonly server: HttpServer;
  private readonly prefix: string;
  /** Two per request: one for its handler, one for its response; zero means idle. */
  private pending = 0;
  private idleWaiters: (() => void)[] = [];
  private listeningOrigin = '';
  /** --public-url and --base-path: ${base-url} whatever the request's Host says; null without --public-url. */
  private readonly publicBaseUrl: string | null;
  /** --trust-proxy, compiled; null: the socket's address. */
  private readonly trust: TrustFunction | null;
  /** The delivery log (docs/deliveries.md); null with --deliveries none. */
  deliveries: DeliveryRecording | null = null;
  /** Tells a replay from the log by its mark; null when nothing can be replayed. */
  replays: ReplayGate | null = null;

  constructor(
    readonly state: HttpServerState,
    private readonly settings: ServeSettings,
    private readonly logger: Logger,
    private readonly metrics: ServiceMetrics,
    private readonly bodies: BodyIntake,
    private readonly guards: Guards | null = null,
    private readonly tracing: Tracing = NO_TRACING,
  ) {
    this.prefix = settings.basePath + '/';
    this.publicBaseUrl = settings.publicUrl === null ? null : settings.publicUrl.base + settings.basePath;
    this.trust = settings.trustProxy === null ? null : compileTrust(settings.trustProxy);
    this.server = createHttpServer(settings.maxBodyBytes, (request, response) => this.handle(request, response));
  }

  setListeningOrigin(origin: string): void {
    this.listeningOrigin = origin;
  }

  /** Requests whose answer is not out yet or whose handler still runs (e.g. after a 503). */
  get inflightRequests(): number {
    return Math.ceil(this.pending / 2);
  }

  /** Resolves when no request is being answered. */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private release(): void {
    if (--this.pending === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Called once per response, however it ended (answered, timed out, client gone). */
  responseClosed(response: TrackedResponse): void {
    const ms = performance.now() - response.started;
    const endpoint = response.endpoint;
    this.logger.request({
      requestId: response.requestId,
      method: response.method,
      path: response.path,
      endpoint: endpoint?.name ?? null,
      status: response.statusCode,
      durationMs: Math.round(ms * 10) / 10,
      aborted: !response.writableFinished,
    });
    this.metrics.requestAnswered(endpoint?.name ?? '(none)', response.statusCode, ms / 1000);
    if (response.span.recording) endServerSpan(response);
    if (response.delivery !== null) this.deliveries?.closed(response, response.req, ms);
    this.release();
  }

  private handle(request: IncomingMessage, response: TrackedResponse): void {
    this.pending += 2;
    response.service = this;
    response.started = performance.now();
    response.on('close', onResponseClose);
    let answering: void | Promise<void>;
    try {
      answering = this.route(request, response);
    } catch (error) {
      this.unexpected(response, error);
      this.release();
      return;
    }
    if (answering === undefined) this.release();
    else answering.then(this.releaseBound, (error: unknown) => (this.unexpected(response, error), this.release()));
  }

  private readonly releaseBound = () => this.release();

  private unexpected(response: TrackedResponse, error: unknown): void {
    this.logger.log('error', 'unexpected error while answering a request', { requestId: response.requestId, error: describeError(error, { stack: true }) });
    if (!response.headersSent) writeProblem(response, 500, 'the request could not be completed', response.requestId);
    else response.destroy();
  }

  /** Synchronous when the answer needs no I/O (the common case); a promise otherwise. */
  private route(request: IncomingMessage, response: TrackedResponse): void | Promise<void> {
    const requestId = newRequestId();
    response.requestId = requestId;
    response.setHeader('x-request-id', requestId);
    // Every answer, whatever its kind: a browser must not read a text/plain body that echoes a
    // value as HTML or script.
    response.setHeader('x-content-type-options', 'nosniff');
    if (this.state.shuttingDown) response.setHeader('connection', 'close');
    if (answeredMalformed(request, response, requestId)) return;

    const url = request.url ?? '/';
    const question = url.indexOf('?');
    const path = question < 0 ? url : url.slice(0, question);
    const method = request.method ?? 'GET';
    response.method = method;
    response.path = path;

    // Probes and scrapers may ask with HEAD: the same answer without its body (node leaves
    // the body out of a HEAD response). Nothing runs for them but what GET does.
    if (path === '/_health') {
      if (method !== 'GET' && method !== 'HEAD') return methodNotAllowed(response, PROBE_ALLOW);
      return answerHealth(response, this.state);
    }
    if (path === '/_ready') {
      if (method !== 'GET' && method !== 'HEAD') return methodNotAllowed(response, PROBE_ALLOW);
      return answerReady(response, this.state, this.settings);
    }
    if (path === '/_metrics') {
      if (method !== 'GET' && method !== 'HEAD') return methodNotAllowed(response, PROBE_ALLOW);
      return answerMetrics(response, this.metrics, this.logger);
    }

    const application = this.state.current;
    const endpoint = path.startsWith(this.prefix) ? application.application.endpointsByName.get(path.slice(this.prefix.length)) : undefined;
    response.endpoint = endpoint;
    // Probes are not traced: a trace per health check would drown the requests.
    if (this.tracing.enabled) response.span = startServerSpan(this.tracing, request, method, endpoint, requestId);

    const cors = this.settings.cors;
    const origin = request.headers.origin;
    const originAllowed = setCorsHeaders(cors, origin, response);

    if (endpoint === undefined && path.startsWith(this.altchaPrefix))
      return answerAltchaChallenge(response, application, path.slice(this.altchaPrefix.length), method, this.guards);
    if (endpoint === undefined) return writeProblem(response, 404, `there is no endpoint at ${truncatePath(path)}`, requestId);
    const replayOf = this.replays?.admit(request) ?? null;
    if (this.deliveries !== null) this.deliveries.begin(response, replayOf);
    if (method === 'OPTIONS' && cors !== null) return answerPreflight(request, response, originAllowed, requestId);
    if (method !== 'GET' && method !== 'POST') return methodNotAllowed(response, ENDPOINT_ALLOW);
    const exchange = new Exchange(request, response, application, endpoint, new Map(), requestId, replayOf !== null, this);
    if (crossOriginRefused(cors, origin, originAllowed, request.headers.host, this.settings.publicUrl)) {
      return this.refuse(exchange, 403, `origin ${truncatePath(origin)} is not allowed`);
    }

    if (question >= 0) {
      const problem = parseUrlEncoded(url.slice(question + 1), exchange.raw, 'query string');
      if (problem !== null) return this.refuse(exchange, 400, problem);
    }
    // Rate limits by the client's address: before the body is read (docs/behaviour.md, "Public forms").
    if (replayOf === null && endpoint.protections !== null && endpoint.protections.limitsByClient.length > 0 && this.guards !== null) {
      const client = this.clientIp(request);
      const exceeded = this.guards.limit(endpoint, endpoint.protections.limitsByClient, () => client, requestId);
      if (exceeded instanceof Promise)
        return this.withTimeout(
          response,
          exceeded.then((e) => this.afterLimit(e, exchange)),
        );
      if (exceeded !== null) return this.tooManyRequests(exceeded, exchange);
    }
    return this.dispatch(exchange, false);
  }

  /**
   * A GET or POST of an endpoint, past its checks: straight from `route`, or after its rate
   * limits were counted elsewhere (`timed`: already within withTimeout). A GET answered
   * without I/O is written synchronously, without a promise.
   */
  private dispatch(exchange: Exchange, timed: boolean): void | Promise<void> {
    const { request, response, endpoint } = exchange;
    let work: Promise<void>;
    if (request.method === 'GET') {
      if (endpoint.webhook !== null && this.webhookAnswered(exchange, exchange.raw, NO_BYTES, undefined)) return;
      const received = runReceived(exchange.application, exchange, NO_BODY);
      if (!(received instanceof Promise)) return this.settle(exchange, received);
      work = received.then((answer) => this.answer(exchange, answer));
    } else {
      work = this.answerPost(exchange);
    }
    return timed ? work : this.withTimeout(response, work);
  }

  private tooManyRequests(exceeded: LimitExceeded, exchange: Exchange): void {
    for (const name in exceeded.headers) exchange.response.setHeader(name, exceeded.headers[name]!);
    return this.refuse(exchange, 429, 'too many requests; try again later');
  }

  /** The rest of a request whose limits were counted elsewhere (workers, Redis); within withTimeout already. */
  private afterLimit(exceeded: LimitExceeded | null, exchange: Exchange): void | Promise<void> {
    if (exceeded !== null) return this.tooManyRequests(exceeded, exchange);
    if (exchange.over) return;
    return this.dispatch(exchange, true);
  }

  /** `<base-path>/_altcha/<endpoint>`: a challenge for an endpoint with <captcha provider="altcha"> (never an endpoint name: they start with a letter or digit). */
  private get altchaPrefix(): string {
    return this.prefix + '_altcha/';
  }

  /** --request-timeout: a 503 if `work` has not answered in time (the work itself goes on). */
  private async withTimeout(response: TrackedResponse, work: Promise<void>): Promise<void> {
    const timer = setTimeout(onRequestTimeout, this.settings.requestTimeoutMs, response);
    try {
      await work;
    } finally {
      clearTimeout(timer);
    }
  }

  private async answerPost(exchange: Exchange): Promise<void> {
    const { request, response, endpoint, raw } = exchange;
    // A handshake reads the query alone: a form body's fields are added to `raw` as it is read.
    const query = endpoint.webhook?.handshake ? new Map(raw) : raw;
    // <deduplicate>: the body's bytes are hashed as they arrive, for the request's fingerprint.
    if (endpoint.deduplicate !== null) exchange.hashBody();
    if (response.delivery !== null) this.deliveries!.captureBody(request, response.delivery);
    const body = await readBody(request, response, raw, this.bodies, exchange.application.bodyKeeping(endpoint), this.clientIp(request), jsonPathsOf(endpoint));
    if (!body.ok) {
      if (body.retryAfterSeconds !== undefined && !response.headersSent) response.setHeader('retry-after', String(body.retryAfterSeconds));
      return this.refuse(exchange, body.status, body.detail);
    }
    // Until the request is decided; its tasks hold the uploads for as long as they run.
    const release = body.uploads.hold();
    let result: PipelineResult;
    try {
      if (endpoint.webhook !== null) {
        const bytes = rawBytes(body.uploads.body);
        const signed = bytes instanceof Promise ? await bytes : bytes;
        if (this.webhookAnswered(exchange, query, signed, body.json?.document)) return;
      }
      const received = await runReceived(exchange.application, exchange, body);
      if (isRefused(received)) return this.refuse(exchange, received.status, received.detail);
      result = received;
    } finally {
      release();
    }
    return this.answer(exchange, result);
  }

  /** <signature> and <handshake> (server/webhooks.ts): true when they answered the request, which then goes no further. */
  private webhookAnswered(exchange: Exchange, query: ValueMap, body: Buffer, json: unknown): boolean {
    if (exchange.over) return true;
    const { request, response, endpoint } = exchange;
    const checked = { method: request.method ?? 'GET', url: this.requestUrl(request), query, headers: request.headersDistinct, body, json };
    const verdict = checkWebhook(endpoint.webhook!, checked, exchange.replay ? null : Date.now());
    if (verdict.kind === 'answer' && response.delivery !== null) response.delivery.classified = 'handshake';
    return answerWebhook(verdict, endpoint, response, exchange.requestId, this.metrics, this.logger);
  }

  /** What the runtime made of a request answered without a promise: its refusal or its result. */
  private settle(exchange: Exchange, received: Received): void | Promise<void> {
    return isRefused(received) ? this.refuse(exchange, received.status, received.detail) : this.answer(exchange, received);
  }

  private answer(exchange: Exchange, result: PipelineResult): void | Promise<void> {
    const response = exchange.response;
    if (exchange.over) return discardResponse(result.response);
    if (response.delivery !== null) this.deliveries!.decided(response.delivery, result);
    return writeResponse(response, result.response, exchange.requestId);
  }

  clientIp(request: IncomingMessage): string {
    return this.trust === null ? socketAddress(request) : forwardedClientIp(request, this.trust);
  }

  /**
   * A request refused before its body was read (413, 415, 400), or whose body was given up
   * when it was answered otherwise (the request timed out): the body is not parsed any
   * further, and what is still coming is discarded (body/linger.ts).
   */
  private refuse(exchange: Exchange, status: number, detail: string): void {
    const { request, response } = exchange;
    // A body given up because its request was answered already (timed out) is only drained.
    if (!exchange.over) writeProblem(response, status, detail, exchange.requestId);
    if (request.complete || request.destroyed) return;
    discardRestOfBody(request, this.settings.maxBodyBytes);
  }

  timedOut(response: TrackedResponse): void {
    if (response.headersSent || response.destroyed) return;
    response.setHeader('connection', 'close');
    writeProblem(response, 503, `the request was not answered within ${formatDuration(this.settings.requestTimeoutMs)}`, response.requestId);
  }

  /**
   * The full URL the sender used, as a signature's {url} signs it: --public-url and the path as
   * received; else, when the peer is a trusted proxy, the scheme and host it forwarded
   * (X-Forwarded-Proto, X-Forwarded-Host); else http:// and Host (client-ip.ts decides trust).
   */
  private requestUrl(request: IncomingMessage): string {
    const path = request.url ?? '/';
    if (this.settings.publicUrl !== null) return this.settings.publicUrl.base + path;
    let scheme = 'http';
    let host = request.headers.host;
    if (this.trust !== null && this.trust(socketAddress(request), 0)) {
      const proto = firstValue(request.headers['x-forwarded-proto'])?.toLowerCase();
      if (proto === 'http' || proto === 'https') scheme = proto;
      host = firstValue(request.headers['x-forwarded-host']) ?? host;
    }
    return host !== undefined && SAFE_HOST.test(host) ? `${scheme}://${host}${path}` : this.listeningOrigin + path;
  }

  baseUrl(request: IncomingMessage): string {
    if (this.publicBaseUrl !== null) return this.publicBaseUrl;
    const host = request.headers.host;
    const origin = host !== undefined && SAFE_HOST.test(host) ? `http://${host}` : this.listeningOrigin;
    return origin + this.settings.basePath;
  }
}

/** A request this server answers 400 whatever its path, and closes the connection after: true when it was one. */
function answeredMalformed(request: IncomingMessage, response: TrackedResponse, requestId: string): boolean {
  // llhttp refuses most unknown versions itself (clientError), but passes HTTP/2.0, HTTP/0.9
  // and a request line without a version (read as 0.9) on as requests.
  const problem = !spokenVersion(request) ? BAD_VERSION : repeatedHost(request) ? REPEATED_HOST : null;
  if (problem === null) return false;
  response.setHeader('connection', 'close');
  writeProblem(response, 400, problem, requestId);
  return true;
}

/** The first of a header's comma-separated values (the one the outermost proxy wrote), trimmed; undefined when absent or empty. */
function firstValue(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  const first = text?.split(',', 1)[0]!.trim();
  return first === undefined || first === '' ? undefined : first;
}
