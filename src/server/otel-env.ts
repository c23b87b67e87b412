// The standard OTEL_* variables of the trace SDK, read here: @opentelemetry/sdk-trace (3.x) reads
// no environment and leaves that to its caller (sdk-trace-base, which it replaced, read them in
// its BasicTracerProvider and BatchSpanProcessor). The same variables, defaults and fallbacks as
// sdk-trace-base 2.x: OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, OTEL_BSP_*, and the span
// limits. The exporter (OTEL_EXPORTER_OTLP_*) and the resource detector (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES) still read theirs themselves.

import type { BatchSpanProcessorOptions, Sampler, SpanLimits } from '@opentelemetry/sdk-trace';

type Env = Readonly<Record<string, string | undefined>>;
type Sdk = typeof import('@opentelemetry/sdk-trace');
type Warn = (message: string) => void;

export interface TraceSettings {
  readonly sampler: Sampler;
  readonly spanLimits: SpanLimits;
  readonly batch: Omit<BatchSpanProcessorOptions, 'exporter'>;
}

const DEFAULT_SAMPLER = 'parentbased_always_on';

/** The sampler, span limits and batching the environment asks for; `warn` hears of a value that is not understood. */
export function traceSettingsFromEnv(env: Env, sdk: Sdk, warn: Warn): TraceSettings {
  const number = (name: string) => numberFrom(env, name, warn);
  return {
    sampler: samplerFrom(env, sdk, warn),
    spanLimits: present({
      attributeCountLimit: number('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT') ?? number('OTEL_ATTRIBUTE_COUNT_LIMIT'),
      attributeValueLengthLimit: number('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT') ?? number('OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT'),
      linkCountLimit: number('OTEL_SPAN_LINK_COUNT_LIMIT'),
      eventCountLimit: number('OTEL_SPAN_EVENT_COUNT_LIMIT'),
      attributePerEventCountLimit: number('OTEL_SPAN_ATTRIBUTE_PER_EVENT_COUNT_LIMIT'),
      attributePerLinkCountLimit: number('OTEL_SPAN_ATTRIBUTE_PER_LINK_COUNT_LIMIT'),
    }),
    batch: present({
      maxExportBatchSize: number('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
      maxQueueSize: number('OTEL_BSP_MAX_QUEUE_SIZE'),
      scheduledDelayMillis: number('OTEL_BSP_SCHEDULE_DELAY'),
      exportTimeoutMillis: number('OTEL_BSP_EXPORT_TIMEOUT'),
    }),
  };
}

/** OTEL_TRACES_SAMPLER (default parentbased_always_on) and, for the ratio samplers, OTEL_TRACES_SAMPLER_ARG (default 1). */
function samplerFrom(env: Env, sdk: Sdk, warn: Warn): Sampler {
  const name = stringFrom(env, 'OTEL_TRACES_SAMPLER') ?? DEFAULT_SAMPLER;
  const ratio = () => {
    const value = numberFrom(env, 'OTEL_TRACES_SAMPLER_ARG', warn);
    if (value === undefined) {
      warn('OTEL_TRACES_SAMPLER_ARG is blank, defaulting to 1.');
      return 1;
    }
    if (value < 0 || value > 1) {
      warn(`OTEL_TRACES_SAMPLER_ARG=${value} was given, but it is out of range ([0..1]), defaulting to 1.`);
      return 1;
    }
    return value;
  };
  switch (name) {
    case 'always_on':
      return new sdk.AlwaysOnSampler();
    case 'always_off':
      return new sdk.AlwaysOffSampler();
    case 'parentbased_always_on':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() });
    case 'traceidratio':
      return new sdk.TraceIdRatioBasedSampler(ratio());
    case 'parentbased_traceidratio':
      return new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(ratio()) });
    default:
      warn(`OTEL_TRACES_SAMPLER value "${name}" invalid, defaulting to "${DEFAULT_SAMPLER}".`);
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() });
  }
}

/** As the SDK read it: unset or blank is absent. */
function stringFrom(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw;
}

/** As the SDK read it: unset or blank is absent, and so is what is not a number, with a warning. */
function numberFrom(env: Env, name: string, warn: Warn): number | undefined {
  const raw = stringFrom(env, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (Number.isNaN(value)) {
    warn(`Unknown value ${JSON.stringify(raw)} for ${name}, expected a number, using defaults`);
    return undefined;
  }
  return value;
}

/** The entries that have a value: an option left out takes the SDK's default. */
function present<T extends Record<string, number | undefined>>(values: T): { [K in keyof T]?: number } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as { [K in keyof T]?: number };
}
