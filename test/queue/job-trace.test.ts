// What a job keeps of its request's trace, and how a run's span is opened and ended, without a
// store or an SDK: a recording Span stands in for OpenTelemetry's (tracing.e2e.test.ts runs the
// real thing). Job data comes from the store, so what reaches the propagator is checked here.
import { describe, expect, it } from 'vitest';
import type { QueuedRun } from '../../src/queue/job.js';
import { endJobSpan, startJobSpan, traceOf } from '../../src/queue/job-trace.js';
import { NO_SPAN, NO_TRACING, type IncomingTraceHeaders, type Span, type SpanAttributeValue, type Tracing } from '../../src/tracing.js';

class RecordedSpan implements Span {
  readonly recording = true;
  readonly attributes: Record<string, SpanAttributeValue> = {};
  error: string | null = null;
  ended = false;

  constructor(
    readonly name: string,
    readonly carrier: IncomingTraceHeaders,
    private readonly headers: Record<string, string> = {},
  ) {}

  setAttribute(name: string, value: SpanAttributeValue): void {
    this.attributes[name] = value;
  }
  setError(code: string): void {
    this.error = code;
  }
  end(): void {
    this.ended = true;
  }
  child(): Span {
    return NO_SPAN;
  }
  inject(headers: Record<string, string | string[] | undefined>): void {
    Object.assign(headers, this.headers);
  }
}

class RecordingTracing implements Tracing {
  readonly enabled = true;
  readonly started: RecordedSpan[] = [];
  startServerSpan(): Span {
    throw new Error('not for jobs');
  }
  startConsumerSpan(name: string, stored: IncomingTraceHeaders): Span {
    const span = new RecordedSpan(name, stored);
    this.started.push(span);
    return span;
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const FIELDS = { requestId: 'r-1', endpoint: 'contact', jobId: 'r-1.0a1b2c3d', attempt: 2 };

function job(trace: unknown): QueuedRun {
  return {
    v: 1,
    endpoint: 'contact',
    requestId: 'r-1',
    fingerprint: 'f',
    enqueuedAt: 0,
    sealed: 's',
    ...(trace !== undefined ? { trace: trace as NonNullable<QueuedRun['trace']> } : {}),
  };
}

describe('traceOf: what the producer stores', () => {
  it('stores nothing without tracing', () => {
    expect(traceOf(NO_SPAN)).toBeUndefined();
  });

  it("stores the span's traceparent, and its tracestate only when there is one", () => {
    expect(traceOf(new RecordedSpan('GET contact', {}, { traceparent: TRACEPARENT }))).toEqual({ traceparent: TRACEPARENT });
    expect(traceOf(new RecordedSpan('GET contact', {}, { traceparent: TRACEPARENT, tracestate: 'a=1' }))).toEqual({
      traceparent: TRACEPARENT,
      tracestate: 'a=1',
    });
  });
});

describe('startJobSpan and endJobSpan', () => {
  it('opens nothing without tracing', () => {
    expect(startJobSpan(NO_TRACING, job({ traceparent: TRACEPARENT }), FIELDS)).toBe(NO_SPAN);
  });

  it('opens a consumer span under the stored context, named after the endpoint, with the job fields only', () => {
    const tracing = new RecordingTracing();
    startJobSpan(tracing, job({ traceparent: TRACEPARENT, tracestate: 'a=1' }), FIELDS);
    const [span] = tracing.started;
    expect(span!.name).toBe('job contact');
    expect(span!.carrier).toEqual({ traceparent: TRACEPARENT, tracestate: 'a=1' });
    expect(span!.attributes).toEqual({
      'endpoint_service.endpoint': 'contact',
      'endpoint_service.request_id': 'r-1',
      'endpoint_service.job.id': 'r-1.0a1b2c3d',
      'endpoint_service.job.attempt': 2,
    });
  });

  it('hands the propagator strings only, whatever the store holds: anything else starts a new trace', () => {
    const tracing = new RecordingTracing();
    for (const trace of [undefined, null, 'text', 42, { traceparent: 42 }, { tracestate: 'a=1' }, { traceparent: [TRACEPARENT] }])
      startJobSpan(tracing, job(trace), FIELDS);
    startJobSpan(tracing, job({ traceparent: TRACEPARENT, tracestate: 7 }), FIELDS);
    expect(tracing.started.map((s) => s.carrier)).toEqual([{}, {}, {}, {}, {}, {}, {}, { traceparent: TRACEPARENT }]);
  });

  it('ends a run that failed, for good or to be retried, as an error with its code; a completed or handed-back run is no error', () => {
    const ended = (outcome: Parameters<typeof endJobSpan>[1], code: string | null) => {
      const span = new RecordedSpan('job contact', {});
      endJobSpan(span, outcome, code);
      expect(span.ended).toBe(true);
      return [span.attributes['endpoint_service.job.outcome'], span.error];
    };
    expect(ended('completed', null)).toEqual(['completed', null]);
    expect(ended('interrupted', null)).toEqual(['interrupted', null]);
    expect(ended('retrying', 'timeout')).toEqual(['retrying', 'timeout']);
    expect(ended('failed', 'http-status')).toEqual(['failed', 'http-status']);
    expect(ended('config-changed', 'config-changed')).toEqual(['config-changed', 'config-changed']);
    expect(ended('failed', null)).toEqual(['failed', 'failed']);
  });
});
