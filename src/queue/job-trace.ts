// A job's place in the trace of the request that queued it. The producer stores the request
// span's W3C trace context with the job; the consumer opens each run's span under it, and hands
// that span to the task engine, so the task spans, and the traceparent an HttpRequest task sends,
// continue the request's trace in whichever process runs the job, however much later.
//
// Tracing off, in either process, costs a `recording` check: nothing is stored, nothing opened.

import { ATTR, NO_SPAN, type Span, type Tracing } from '../tracing.js';
import type { JobTrace, QueuedRun } from './job.js';
import type { JobFields, RunOutcome } from './observer.js';

/** What the producer stores of the request's span; undefined when this process does not trace. */
export function traceOf(span: Span): JobTrace | undefined {
  if (!span.recording) return undefined;
  const headers: Record<string, string | string[] | undefined> = {};
  span.inject(headers);
  const { traceparent, tracestate } = headers;
  if (typeof traceparent !== 'string') return undefined;
  return typeof tracestate === 'string' && tracestate !== '' ? { traceparent, tracestate } : { traceparent };
}

/**
 * The span of one run of a job (each attempt, each resumption has its own), under the stored
 * context, or the root of a new trace when the job has none (queued without tracing) or one that
 * is not valid. Its attributes say which job it is; never a parameter or any other value of the run.
 */
export function startJobSpan(tracing: Tracing, data: QueuedRun, fields: JobFields): Span {
  if (!tracing.enabled) return NO_SPAN;
  const span = tracing.startConsumerSpan(`job ${fields.endpoint}`, storedContext(data));
  span.setAttribute(ATTR.endpoint, fields.endpoint);
  span.setAttribute(ATTR.requestId, fields.requestId);
  span.setAttribute(ATTR.jobId, fields.jobId);
  span.setAttribute(ATTR.jobAttempt, fields.attempt);
  return span;
}

/**
 * Ends a run's span with its outcome. A run that failed, for good or to be retried, is an error,
 * with `code`: the failed task's code (`http-status`, `timeout`, …) or why the job could not run
 * (`config-changed`, `unreadable`). A run handed back on shutdown, or void (nothing ran), is not a failure.
 */
export function endJobSpan(span: Span, outcome: RunOutcome, code: string | null): void {
  if (!span.recording) return;
  span.setAttribute(ATTR.jobOutcome, outcome);
  if (outcome !== 'completed' && outcome !== 'interrupted' && outcome !== 'void') span.setError(code ?? outcome);
  span.end();
}

/** The stored context as headers, strings only: job data comes from the store, whatever wrote it. */
function storedContext(data: QueuedRun): Record<string, string> {
  const trace: unknown = data.trace;
  if (typeof trace !== 'object' || trace === null) return {};
  const { traceparent, tracestate } = trace as Record<string, unknown>;
  if (typeof traceparent !== 'string') return {};
  return typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent };
}
