// The Tracing of src/tracing.ts backed by the OpenTelemetry SDK: spans exported over OTLP/HTTP
// (JSON) by a batch processor. Imported only when tracing is on (serve --otel or worker --otel, or
// an OTLP endpoint in the environment), so a process without tracing never loads the SDK.
//
// Configured by the standard variables: read by the SDK itself, OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (default http://localhost:4318), OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; read in ./otel-env.ts, since the trace SDK
// leaves them to its caller, OTEL_TRACES_SAMPLER and its _ARG, OTEL_BSP_* and the span limits.
// No global provider or context manager is installed: parents are passed explicitly, so nothing
// else in the process is traced behind the service's back.

import type { Context, Span as ApiSpan, SpanKind as ApiSpanKind, Tracer } from '@opentelemetry/api';
import type { TextMapPropagator } from '@opentelemetry/api';
import { ATTR, type IncomingTraceHeaders, type Span, type SpanAttributeValue, type SpanKind, type Tracing } from '../tracing.js';
import { traceSettingsFromEnv } from './otel-env.js';

export interface TracingOptions {
  readonly serviceVersion: string;
  /** Where the SDK's own problems go (an export the collector refused, say). */
  warn(message: string): void;
}

type Api = typeof import('@opentelemetry/api');

export async function startTracing(options: TracingOptions): Promise<Tracing> {
  const [api, core, sdk, otlp, resources] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  api.diag.setLogger(
    {
      error: (message) => options.warn(`tracing: ${message}`),
      warn: (message) => options.warn(`tracing: ${message}`),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    api.DiagLogLevel.WARN,
  );
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (envDetector) win over the defaults. The pid
  // tells the workers of --workers N apart; the SDK's process detector is not used, since it
  // would export the command line, which may hold an --smtp-url with its password.
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': 'endpoint-service', 'service.version': options.serviceVersion, 'process.pid': process.pid }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const settings = traceSettingsFromEnv(process.env, sdk, (message) => options.warn(`tracing: ${message}`));
  const provider = new sdk.TracerProvider({
    resource,
    sampler: settings.sampler,
    spanLimits: settings.spanLimits,
    spanProcessors: [new sdk.BatchSpanProcessor({ ...settings.batch, exporter: new otlp.OTLPTraceExporter() })],
  });
  const backend: Backend = {
    api,
    tracer: provider.getTracer('endpoint-service', options.serviceVersion),
    propagator: new core.W3CTraceContextPropagator(),
  };
  return {
    enabled: true,
    startServerSpan(name: string, headers: IncomingTraceHeaders): Span {
      return startUnder(backend, name, api.SpanKind.SERVER, headers);
    },
    startConsumerSpan(name: string, stored: IncomingTraceHeaders): Span {
      return startUnder(backend, name, api.SpanKind.CONSUMER, stored);
    },
    async shutdown(): Promise<void> {
      try {
        await provider.shutdown();
      } catch (error) {
        options.warn(`tracing: the last spans could not be exported: ${(error as Error).message}`);
      }
    },
  };
}

/** A span whose parent is the `traceparent` in `carrier` when it is valid, else the root of a new trace. */
function startUnder(backend: Backend, name: string, kind: ApiSpanKind, carrier: IncomingTraceHeaders): Span {
  const { api } = backend;
  const parent = backend.propagator.extract(api.ROOT_CONTEXT, carrier, api.defaultTextMapGetter);
  return new OtelSpan(backend, backend.tracer.startSpan(name, { kind }, parent));
}

interface Backend {
  readonly api: Api;
  readonly tracer: Tracer;
  readonly propagator: TextMapPropagator;
}

class OtelSpan implements Span {
  readonly recording = true;
  private context: Context | null = null;

  constructor(
    private readonly backend: Backend,
    private readonly span: ApiSpan,
  ) {}

  setAttribute(name: string, value: SpanAttributeValue): void {
    this.span.setAttribute(name, value);
  }

  setError(code: string): void {
    this.span.setAttribute(ATTR.errorType, code);
    this.span.setStatus({ code: this.backend.api.SpanStatusCode.ERROR, message: code });
  }

  end(): void {
    this.span.end();
  }

  child(name: string, kind: SpanKind): Span {
    const { api, tracer } = this.backend;
    return new OtelSpan(this.backend, tracer.startSpan(name, { kind: kind === 'client' ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL }, this.asContext()));
  }

  inject(headers: Record<string, string | string[] | undefined>): void {
    this.backend.propagator.inject(this.asContext(), headers, this.backend.api.defaultTextMapSetter);
  }

  private asContext(): Context {
    return (this.context ??= this.backend.api.trace.setSpan(this.backend.api.ROOT_CONTEXT, this.span));
  }
}
