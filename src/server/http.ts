// The node:http adapter: routes a request, applies its limits and hands it to the pipeline.
// CORS is in cors.ts, writing an answer in write-response.ts, reading a body in
// body-admission.ts. Nothing here knows about actions or tasks; the pipeline decides, this
// file only speaks HTTP.

import { randomUUID } from 'node:crypto';
import { createServer, ServerResponse, STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Endpoint } from '../compiler/ast.js';
import { runRequest, type PipelineResult, type RequestInfo } from '../runtime/pipeline.js';
import { discardResponse } from '../runtime/response.js';
import { parseUrlEncoded, type ValueMap } from '../runtime/urlencoded.js';
import { describeError } from '../errors.js';
import { RequestUploads } from '../upload.js';
import { readBody } from './body-admission.js';
import type { BodyIntake } from './body-intake.js';
import { answerPreflight, crossOriginRefused, ENDPOINT_ALLOW, setCorsHeaders } from './cors.js';
import { problemBody, writeBody, writeProblem, writeResponse } from './write-response.js';
import { requestSources } from './request-sources.js';
import { digestBody } from './body-digest.js';
import { requestFingerprint } from '../runtime/deduplication.js';
import type { LoadedApplication } from '../runtime/loaded.js';
import type { Guards, LimitExceeded } from '../runtime/guards.js';
import type { Logger } from './log.js';
import type { ServiceMetrics } from './metrics.js';
import { type ServeSettings } from './options.js';
import { formatDuration } from '../units.js';
import { ATTR, NO_SPAN, NO_TRACING, type Span, type Tracing } from '../tracing.js';
import { expandTemplate } from '../template/expand.js';
import { SYSTEM_PARAMETERS, type SystemParameter } from '../template/types.js';
import { compileTrust, forwardedClientIp, socketAddress, type TrustFunction } from './client-ip.js';
import { answerWebhook, checkWebhook, rawBytes } from './webhooks.js';

/** How long the headers of a request may take. */
export const HEADERS_TIMEOUT_MS = 10_000;

export interface HttpServerState {
  /** The application new requests are served by; replaced on a --watch reload. */
  current: LoadedApplication;
  shuttingDown: boolean;
  /** serve --queue: whether its store answers, for /_health (a store that is down does not make the instance unhealthy) and /_ready (it makes it unready). */
  readonly queue?: { readonly up: boolean } | null;
}

/** /_health, /_ready and /_metrics. Endpoints have no HEAD: it would run their tasks. */
const PROBE_ALLOW = 'GET, HEAD';
/** How long, and how much, of a refused body is discarded before the connection is cut. */
const LINGER_MS = 5000;
const LINGER_MIN_BYTES = 16 * 1024 * 1024;
const NO_UPLOADS = RequestUploads.NONE;
/** A GET's body, for its <signature>. */
const NO_BODY = Buffer.alloc(0);
/** A key is ${env:...} only: it reads no system value. */
const NO_SYSTEM_VALUES = Object.fromEntries(SYSTEM_PARAMETERS.map((name) => [name, ''])) as Record<SystemParameter, string>;
const HEALTHY = '{"status":"ok"}';
const READY = '{"status":"ready"}';
const BAD_VERSION = 'the HTTP version must be HTTP/1.0 or HTTP/1.1';
/** Hosts as they appear in a Host header; anything else falls back to the listening address. */
const SAFE_HOST = /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/**
 * The response of one request, carrying what its log line and metrics need: node creates it
 * (createServer's ServerResponse option), so the hot path allocates no closures for it.
 */
class TrackedResponse extends ServerResponse {
  service: HttpService | null = null;
  started = 0;
  requestId = '';
  method = '';
  path = '';
  endpoint: Endpoint | undefined = undefined;
  /** NO_SPAN unless tracing is on. */
  span: Span = NO_SPAN;
}

function onResponseClose(this: TrackedResponse): void {
  this.service?.responseClosed(this);
}

function onRequestTimeout(response: TrackedResponse): void {
  response.service?.timedOut(response);
}

export class HttpService {
  readonly server: Server<typeof IncomingMessage, typeof TrackedResponse>;
  private readonly prefix: string;
  /** Two per request: one for its handler, one for its response; zero means idle. */
  private pending = 0;
  private idleWaiters: (() => void)[] = [];
  private listeningOrigin = '';
  /** --public-url and --base-path: ${base-url} whatever the request's Host says; null without --public-url. */
  private readonly publicBaseUrl: string | null;
  /** --trust-proxy, compiled; null: the socket's address. */
  private readonly trust: TrustFunction | null;

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
    this.server = createServer<typeof IncomingMessage, typeof TrackedResponse>(
      {
        ServerResponse: TrackedResponse,
        headersTimeout: HEADERS_TIMEOUT_MS,
        // The whole-request limit is ours (a 503); node's own would only cut the connection.
        requestTimeout: 0,
        // How often node checks the headers timeout; its default (30 s) would let 10 s become 40.
        connectionsCheckingInterval: 1000,
      },
      (request, response) => void this.handle(request, response),
    );
    this.server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => this.clientError(error, socket));
    // A client that asks before sending a body it declares too large gets its 413 without
    // sending a byte of it; any other is told to go on.
    this.server.on('checkContinue', (request: IncomingMessage, response: TrackedResponse) => {
      const length = request.headers['content-length'];
      if (length === undefined || Number(length) <= this.settings.maxBodyBytes) response.writeContinue();
      this.handle(request, response);
    });
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
    const requestId = randomUUID();
    response.requestId = requestId;
    response.setHeader('x-request-id', requestId);
    // Every answer, whatever its kind: a browser must not read a text/plain body that echoes a
    // value as HTML or script.
    response.setHeader('x-content-type-options', 'nosniff');
    if (this.state.shuttingDown) response.setHeader('connection', 'close');
    // llhttp refuses most unknown versions itself (clientError), but passes HTTP/2.0, HTTP/0.9
    // and a request line without a version (read as 0.9) on as requests.
    if (!spokenVersion(request)) {
      response.setHeader('connection', 'close');
      return writeProblem(response, 400, BAD_VERSION, requestId);
    }

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
      if (this.state.shuttingDown) writeProblem(response, 503, 'the service is shutting down', requestId);
      else writeBody(response, 200, 'application/json', this.state.queue ? `{"status":"ok","queue":"${this.state.queue.up ? 'up' : 'unreachable'}"}` : HEALTHY);
      return;
    }
    if (path === '/_ready') {
      if (method !== 'GET' && method !== 'HEAD') return methodNotAllowed(response, PROBE_ALLOW);
      return this.answerReady(response);
    }
    if (path === '/_metrics') {
      if (method !== 'GET' && method !== 'HEAD') return methodNotAllowed(response, PROBE_ALLOW);
      return this.answerMetrics(response);
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
      return this.answerAltcha(response, application, path.slice(this.altchaPrefix.length), method);
    if (endpoint === undefined) return writeProblem(response, 404, `there is no endpoint at ${truncatePath(path)}`, requestId);
    if (method === 'OPTIONS' && cors !== null) return answerPreflight(request, response, originAllowed, requestId);
    if (method !== 'GET' && method !== 'POST') return methodNotAllowed(response, ENDPOINT_ALLOW);
    if (crossOriginRefused(cors, origin, originAllowed, request.headers.host, this.settings.publicUrl)) {
      return this.refuse(request, response, 403, `origin ${truncatePath(origin)} is not allowed`, requestId);
    }

    const raw: ValueMap = new Map();
    if (question >= 0) {
      const problem = parseUrlEncoded(url.slice(question + 1), raw, 'query string');
      if (problem !== null) return this.refuse(request, response, 400, problem, requestId);
    }
    // Rate limits by the client's address: before the body is read (docs/behaviour.md, "Public forms").
    if (endpoint.protections !== null && endpoint.protections.limitsByClient.length > 0 && this.guards !== null) {
      const client = this.clientIp(request);
      const exceeded = this.guards.limit(endpoint, endpoint.protections.limitsByClient, () => client, requestId);
      if (exceeded instanceof Promise)
        return this.withTimeout(
          response,
          exceeded.then((e) => this.afterLimit(e, request, response, application, endpoint, raw, requestId)),
        );
      if (exceeded !== null) return this.tooManyRequests(exceeded, request, response, requestId);
    }
    return this.dispatch(request, response, application, endpoint, raw, requestId, false);
  }

  /**
   * A GET or POST of an endpoint, past its checks: straight from `route`, or after its rate
   * limits were counted elsewhere (`timed`: already within withTimeout). A GET answered
   * without I/O is written synchronously, without a promise.
   */
  private dispatch(
    request: IncomingMessage,
    response: TrackedResponse,
    application: LoadedApplication,
    endpoint: Endpoint,
    raw: ValueMap,
    requestId: string,
    timed: boolean,
  ): void | Promise<void> {
    let work: Promise<void>;
    if (request.method === 'GET') {
      if (endpoint.webhook !== null && this.webhookAnswered(request, response, endpoint, raw, NO_BODY, undefined, requestId)) return;
      const result = runRequest(application, {
        endpoint,
        raw,
        sources: requestSources(request, endpoint, null),
        uploads: NO_UPLOADS,
        info: this.requestInfo(request, requestId),
        span: response.span,
        // One shape for every request (no spread on the hot path): undefined without <deduplicate>.
        fingerprint: endpoint.deduplicate !== null ? requestFingerprint(queryOf(request), '') : undefined,
      });
      if (!(result instanceof Promise)) return writeResponse(response, result.response, requestId);
      work = result.then((answer) => this.answer(response, answer, requestId));
    } else {
      work = this.answerPost(request, response, application, endpoint, raw, requestId);
    }
    return timed ? work : this.withTimeout(response, work);
  }

  private tooManyRequests(exceeded: LimitExceeded, request: IncomingMessage, response: TrackedResponse, requestId: string): void {
    for (const name in exceeded.headers) response.setHeader(name, exceeded.headers[name]!);
    return this.refuse(request, response, 429, 'too many requests; try again later', requestId);
  }

  /** The rest of a request whose limits were counted elsewhere (workers, Redis); within withTimeout already. */
  private afterLimit(
    exceeded: LimitExceeded | null,
    request: IncomingMessage,
    response: TrackedResponse,
    application: LoadedApplication,
    endpoint: Endpoint,
    raw: ValueMap,
    requestId: string,
  ): void | Promise<void> {
    if (exceeded !== null) return this.tooManyRequests(exceeded, request, response, requestId);
    if (response.headersSent || response.destroyed) return;
    return this.dispatch(request, response, application, endpoint, raw, requestId, true);
  }

  /** `<base-path>/_altcha/<endpoint>`: a challenge for an endpoint with <captcha provider="altcha"> (never an endpoint name: they start with a letter or digit). */
  private get altchaPrefix(): string {
    return this.prefix + '_altcha/';
  }

  private async answerAltcha(response: TrackedResponse, application: LoadedApplication, name: string, method: string): Promise<void> {
    const captcha = application.application.endpointsByName.get(name)?.protections?.captcha;
    if (captcha?.provider !== 'altcha' || this.guards === null)
      return writeProblem(response, 404, `there is no ALTCHA challenge at ${truncatePath(response.path)}`, response.requestId);
    if (method !== 'GET') return methodNotAllowed(response, 'GET');
    const challenge = await this.guards.altchaChallenge(
      expandTemplate(captcha.secret, { parameters: new Map(), system: NO_SYSTEM_VALUES, env: application.env }),
    );
    // Each challenge is good for one solution: a cache must not hand the same one out twice.
    response.setHeader('cache-control', 'no-store');
    writeBody(response, 200, 'application/json', challenge);
  }

  /**
   * Readiness, apart from /_health's liveness: whether this instance can serve every endpoint
   * now. A store that is down makes background endpoints answer 503 (unless the fallback runs
   * them here), which a restart of this process would not mend: /_health stays 200, this is 503
   * so that a load balancer sends the traffic elsewhere.
   */
  private answerReady(response: TrackedResponse): void {
    if (this.state.shuttingDown) return writeProblem(response, 503, 'the service is shutting down', response.requestId);
    const queue = this.state.queue;
    if (queue === null || queue === undefined) return writeBody(response, 200, 'application/json', READY);
    if (!queue.up && this.settings.queue?.fallback !== 'in-process') {
      response.setHeader('retry-after', '5');
      return writeProblem(response, 503, 'the queue store is unreachable: background endpoints answer 503', response.requestId);
    }
    writeBody(response, 200, 'application/json', `{"status":"ready","queue":"${queue.up ? 'up' : 'unreachable'}"}`);
  }

  private async answerMetrics(response: TrackedResponse): Promise<void> {
    try {
      const text = await this.metrics.render();
      writeBody(response, 200, this.metrics.contentType, text);
    } catch (error) {
      this.logger.log('error', 'metrics could not be collected', { error: describeError(error, { stack: true }) });
      writeProblem(response, 503, 'metrics could not be collected; try again', response.requestId);
    }
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

  private async answerPost(
    request: IncomingMessage,
    response: TrackedResponse,
    application: LoadedApplication,
    endpoint: Endpoint,
    raw: ValueMap,
    requestId: string,
  ): Promise<void> {
    // A handshake reads the query alone: a form body's fields are added to `raw` as it is read.
    const query = endpoint.webhook?.handshake ? new Map(raw) : raw;
    // <deduplicate>: the body's bytes are hashed as they arrive, for the request's fingerprint.
    const digest = endpoint.deduplicate !== null ? digestBody(request) : null;
    const body = await readBody(request, response, raw, this.bodies, application.bodyKeeping(endpoint), this.clientIp(request));
    if (!body.ok) {
      if (body.retryAfterSeconds !== undefined && !response.headersSent) response.setHeader('retry-after', String(body.retryAfterSeconds));
      return this.refuse(request, response, body.status, body.detail, requestId);
    }
    // Until the request is decided; its tasks hold the uploads for as long as they run.
    const release = body.uploads.hold();
    let result: PipelineResult;
    try {
      if (endpoint.webhook !== null) {
        const bytes = rawBytes(body.uploads.body);
        const received = bytes instanceof Promise ? await bytes : bytes;
        if (this.webhookAnswered(request, response, endpoint, query, received, body.json?.document, requestId)) return;
      }
      if (body.unparsed !== undefined) return this.refuse(request, response, body.unparsed.status, body.unparsed.detail, requestId);
      result = await runRequest(application, {
        endpoint,
        raw,
        sources: requestSources(request, endpoint, body.json ?? null),
        uploads: body.uploads,
        info: this.requestInfo(request, requestId),
        span: response.span,
        fingerprint: digest !== null ? requestFingerprint(queryOf(request), digest()) : undefined,
      });
    } finally {
      release();
    }
    return this.answer(response, result, requestId);
  }

  /** <signature> and <handshake> (server/webhooks.ts): true when they answered the request, which then goes no further. */
  private webhookAnswered(
    request: IncomingMessage,
    response: TrackedResponse,
    endpoint: Endpoint,
    query: ValueMap,
    body: Buffer,
    json: unknown,
    requestId: string,
  ): boolean {
    if (response.headersSent || response.destroyed) return true;
    const checked = { method: request.method ?? 'GET', query, headers: request.headersDistinct, body, json };
    return answerWebhook(checkWebhook(endpoint.webhook!, checked, Date.now()), endpoint, response, requestId, this.metrics, this.logger);
  }

  private answer(response: TrackedResponse, result: PipelineResult, requestId: string): void | Promise<void> {
    if (response.headersSent || response.destroyed) return discardResponse(result.response);
    return writeResponse(response, result.response, requestId);
  }

  private requestInfo(request: IncomingMessage, requestId: string): RequestInfo {
    return { requestId, clientIp: this.clientIp(request), userAgent: request.headers['user-agent'] ?? '', baseUrl: this.baseUrl(request) };
  }

  clientIp(request: IncomingMessage): string {
    return this.trust === null ? socketAddress(request) : forwardedClientIp(request, this.trust);
  }

  /**
   * A request refused before its body was read (413, 415, 400), or whose body was given up
   * when it was answered otherwise (the request timed out). The body is not parsed any
   * further, but a client still sending it would get a connection reset instead of the
   * answer if the socket closed now: the rest is discarded for a bounded while, as web
   * servers do, and the connection is cut when that bound is crossed.
   */
  private refuse(request: IncomingMessage, response: ServerResponse, status: number, detail: string, requestId: string): void {
    // A body given up because its request was answered already (timed out) is only drained.
    if (!response.headersSent && !response.destroyed) writeProblem(response, status, detail, requestId);
    if (request.complete || request.destroyed) return;
    const socket = request.socket;
    const cap = Math.max(this.settings.maxBodyBytes, LINGER_MIN_BYTES);
    let discarded = 0;
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    request.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > cap) socket.destroy();
    });
    request.once('end', () => clearTimeout(timer));
    request.once('close', () => clearTimeout(timer));
    request.resume();
  }

  timedOut(response: TrackedResponse): void {
    if (response.headersSent || response.destroyed) return;
    response.setHeader('connection', 'close');
    writeProblem(response, 503, `the request was not answered within ${formatDuration(this.settings.requestTimeoutMs)}`, response.requestId);
  }

  private baseUrl(request: IncomingMessage): string {
    if (this.publicBaseUrl !== null) return this.publicBaseUrl;
    const host = request.headers.host;
    const origin = host !== undefined && SAFE_HOST.test(host) ? `http://${host}` : this.listeningOrigin;
    return origin + this.settings.basePath;
  }

  private clientError(error: NodeJS.ErrnoException, socket: Socket): void {
    if (error.code === 'ECONNRESET' || error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const requestId = randomUUID();
    const detail = status === 431 ? 'the request headers are too large' : error.code === 'HPE_INVALID_VERSION' ? BAD_VERSION : 'the request is not valid HTTP';
    const body = problemBody(status, detail, requestId);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-type: application/problem+json\r\nx-content-type-options: nosniff\r\nx-request-id: ${requestId}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
}

/** Method, route (the endpoint's name) and request id: never the path's query, a header or a parameter. */
function startServerSpan(tracing: Tracing, request: IncomingMessage, method: string, endpoint: Endpoint | undefined, requestId: string): Span {
  const span = tracing.startServerSpan(endpoint === undefined ? method : `${method} ${endpoint.name}`, request.headers);
  span.setAttribute(ATTR.method, method);
  if (endpoint !== undefined) span.setAttribute(ATTR.route, endpoint.name);
  span.setAttribute(ATTR.requestId, requestId);
  return span;
}

function endServerSpan(response: TrackedResponse): void {
  const { span, statusCode } = response;
  span.setAttribute(ATTR.status, statusCode);
  if (!response.writableFinished) span.setAttribute(ATTR.aborted, true);
  if (statusCode >= 500) span.setError(String(statusCode));
  span.end();
}

/** HTTP/1.0 and HTTP/1.1, the versions this server speaks; any other request is a 400 (SECURITY.md). */
function spokenVersion(request: IncomingMessage): boolean {
  return request.httpVersionMajor === 1 && (request.httpVersionMinor === 0 || request.httpVersionMinor === 1);
}

function methodNotAllowed(response: TrackedResponse, allow: string): void {
  response.setHeader('allow', allow);
  writeProblem(response, 405, `the method must be ${allow.replace(', ', ' or ')}`, response.requestId);
}

function truncatePath(path: string): string {
  return path.length > 100 ? `${path.slice(0, 97)}...` : path;
}

/** The query string as sent ('' without one), for a deduplicated request's fingerprint. */
function queryOf(request: IncomingMessage): string {
  const url = request.url ?? '';
  const question = url.indexOf('?');
  return question < 0 ? '' : url.slice(question + 1);
}
