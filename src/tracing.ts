// What the service asks of distributed tracing, small enough that the runtime and the task kinds
// can use it without knowing OpenTelemetry: a span that takes attributes, ends, starts children
// and writes its W3C traceparent into a header map. Tracing is off unless serve or worker is asked
// for it (--otel or the OTEL_* variables); then src/server/otel.ts backs it with the OpenTelemetry
// SDK, loaded only then. Off, every span is NO_SPAN: no allocation, and every call returns at once.
//
// Attributes never carry a secret: no query string, no credential, no parameter value
// (docs/behaviour.md, "Traces").

export type SpanAttributeValue = string | number | boolean;

export type SpanKind = 'internal' | 'client';

export interface Span {
  /** False for NO_SPAN: callers skip work that only feeds a span. */
  readonly recording: boolean;
  setAttribute(name: string, value: SpanAttributeValue): void;
  /** Marks the span failed; `code` is a stable code (a TaskError code, an HTTP status), never a message. */
  setError(code: string): void;
  end(): void;
  /** A span under this one, started now. */
  child(name: string, kind: SpanKind): Span;
  /** Writes `traceparent` (and `tracestate`) for this span into outgoing headers. */
  inject(headers: Record<string, string | string[] | undefined>): void;
}

export type IncomingTraceHeaders = Readonly<Record<string, string | string[] | undefined>>;

export interface Tracing {
  readonly enabled: boolean;
  /** The span of one incoming request, under the caller's `traceparent` when it sent a valid one. */
  startServerSpan(name: string, headers: IncomingTraceHeaders): Span;
  /**
   * The span of one run of a queued job, under the `traceparent` stored with the job (the
   * request's span, in another process and maybe much earlier); a new trace without a valid one.
   */
  startConsumerSpan(name: string, stored: IncomingTraceHeaders): Span;
  /** Exports what is left and stops; a no-op when off. */
  shutdown(): Promise<void>;
}

function nothing(): void {}

export const NO_SPAN: Span = {
  recording: false,
  setAttribute: nothing,
  setError: nothing,
  end: nothing,
  child: () => NO_SPAN,
  inject: nothing,
};

export const NO_TRACING: Tracing = {
  enabled: false,
  startServerSpan: () => NO_SPAN,
  startConsumerSpan: () => NO_SPAN,
  shutdown: () => Promise.resolve(),
};

/** Attribute names of the service's own spans (docs/behaviour.md, "Traces"). */
export const ATTR = {
  requestId: 'endpoint_service.request_id',
  endpoint: 'endpoint_service.endpoint',
  taskId: 'endpoint_service.task.id',
  taskKind: 'endpoint_service.task.kind',
  taskAttempt: 'endpoint_service.task.attempt',
  taskAttempts: 'endpoint_service.task.attempts',
  taskOutcome: 'endpoint_service.task.outcome',
  jobId: 'endpoint_service.job.id',
  jobAttempt: 'endpoint_service.job.attempt',
  jobOutcome: 'endpoint_service.job.outcome',
  errorType: 'error.type',
  aborted: 'endpoint_service.aborted',
  method: 'http.request.method',
  route: 'http.route',
  status: 'http.response.status_code',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  urlScheme: 'url.scheme',
} as const;

/** server.address, server.port and url.scheme of a URL: never its path, query or credentials. */
export function setTargetAttributes(span: Span, url: URL): void {
  span.setAttribute(ATTR.serverAddress, url.hostname);
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  span.setAttribute(ATTR.serverPort, port);
  span.setAttribute(ATTR.urlScheme, url.protocol.slice(0, -1));
}
