// The OTEL_* variables that @opentelemetry/sdk-trace leaves to its caller (src/server/otel-env.ts):
// read with the names, defaults and fallbacks sdk-trace-base 2.x had, so that a deployment's
// variables mean what they meant before.
import * as sdk from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { traceSettingsFromEnv } from '../../src/server/otel-env.js';

function read(env: Record<string, string | undefined>) {
  const warnings: string[] = [];
  const settings = traceSettingsFromEnv(env, sdk, (message) => warnings.push(message));
  return { sampler: settings.sampler.toString(), spanLimits: settings.spanLimits, batch: settings.batch, warnings };
}

const parentBased = (root: sdk.Sampler) => new sdk.ParentBasedSampler({ root }).toString();

describe('the OTEL_* variables of the trace SDK', () => {
  it('leaves everything to the defaults when none is set, or a variable is blank', () => {
    const expected = { sampler: parentBased(new sdk.AlwaysOnSampler()), spanLimits: {}, batch: {}, warnings: [] };
    expect(read({})).toEqual(expected);
    expect(read({ OTEL_TRACES_SAMPLER: ' ', OTEL_BSP_SCHEDULE_DELAY: '', OTEL_SPAN_LINK_COUNT_LIMIT: '  ' })).toEqual(expected);
  });

  it.each([
    ['always_on', undefined, new sdk.AlwaysOnSampler().toString()],
    ['always_off', undefined, new sdk.AlwaysOffSampler().toString()],
    ['parentbased_always_on', undefined, parentBased(new sdk.AlwaysOnSampler())],
    ['parentbased_always_off', undefined, parentBased(new sdk.AlwaysOffSampler())],
    ['traceidratio', '0.25', 'TraceIdRatioBased{0.25}'],
    ['parentbased_traceidratio', '0.1', parentBased(new sdk.TraceIdRatioBasedSampler(0.1))],
  ])('OTEL_TRACES_SAMPLER=%s (OTEL_TRACES_SAMPLER_ARG=%s)', (name, arg, sampler) => {
    expect(read({ OTEL_TRACES_SAMPLER: name, OTEL_TRACES_SAMPLER_ARG: arg })).toMatchObject({ sampler, warnings: [] });
  });

  it('falls back with a warning on an unknown sampler, and on a ratio that is missing, out of range or not a number', () => {
    expect(read({ OTEL_TRACES_SAMPLER: 'sometimes' })).toEqual({
      sampler: parentBased(new sdk.AlwaysOnSampler()),
      spanLimits: {},
      batch: {},
      warnings: ['OTEL_TRACES_SAMPLER value "sometimes" invalid, defaulting to "parentbased_always_on".'],
    });
    expect(read({ OTEL_TRACES_SAMPLER: 'traceidratio' })).toMatchObject({
      sampler: 'TraceIdRatioBased{1}',
      warnings: ['OTEL_TRACES_SAMPLER_ARG is blank, defaulting to 1.'],
    });
    expect(read({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' })).toMatchObject({
      sampler: 'TraceIdRatioBased{1}',
      warnings: ['OTEL_TRACES_SAMPLER_ARG=1.5 was given, but it is out of range ([0..1]), defaulting to 1.'],
    });
    expect(read({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' }).warnings).toEqual([
      'Unknown value "half" for OTEL_TRACES_SAMPLER_ARG, expected a number, using defaults',
      'OTEL_TRACES_SAMPLER_ARG is blank, defaulting to 1.',
    ]);
  });

  it('reads the batch settings and the span limits, a span limit before the general limit of the same kind', () => {
    const settings = read({
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '64',
      OTEL_BSP_MAX_QUEUE_SIZE: '1024',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_BSP_EXPORT_TIMEOUT: '2000',
      OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '20',
      OTEL_ATTRIBUTE_COUNT_LIMIT: '10',
      OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '100',
      OTEL_SPAN_LINK_COUNT_LIMIT: '1',
      OTEL_SPAN_EVENT_COUNT_LIMIT: '2',
      OTEL_SPAN_ATTRIBUTE_PER_EVENT_COUNT_LIMIT: '3',
      OTEL_SPAN_ATTRIBUTE_PER_LINK_COUNT_LIMIT: '4',
    });
    expect(settings.batch).toEqual({ maxExportBatchSize: 64, maxQueueSize: 1024, scheduledDelayMillis: 50, exportTimeoutMillis: 2000 });
    expect(settings.spanLimits).toEqual({
      attributeCountLimit: 20,
      attributeValueLengthLimit: 100,
      linkCountLimit: 1,
      eventCountLimit: 2,
      attributePerEventCountLimit: 3,
      attributePerLinkCountLimit: 4,
    });
    expect(settings.warnings).toEqual([]);
  });

  it('ignores a setting that is not a number, with a warning', () => {
    expect(read({ OTEL_BSP_SCHEDULE_DELAY: 'soon' })).toMatchObject({
      batch: {},
      warnings: ['Unknown value "soon" for OTEL_BSP_SCHEDULE_DELAY, expected a number, using defaults'],
    });
  });
});
