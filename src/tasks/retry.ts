// The retry policy every task kind shares: which failures are tried again (the TaskError says
// whether it is transient), how long to wait (full jitter, or the peer's Retry-After up to a
// cap), and how the attempt count reaches the error. got's and nodemailer's own retries stay
// off so the attempt count, the jitter and the cap are the same for every kind.

import { setTimeout as sleep } from 'node:timers/promises';
import { ATTR, NO_SPAN, type Span } from '../tracing.js';
import { TaskError } from './errors.js';

const FIRST_BACKOFF_MS = 200;
/** The longest wait between two attempts within one run of a task. */
const MAX_ATTEMPT_BACKOFF_MS = 5_000;
/** A peer that asks for a longer pause gets none of our retries: failing beats hammering it early. */
export const MAX_RETRY_AFTER_MS = 5_000;

export interface RetryOptions {
  /** Extra attempts after the first. */
  readonly retries: number;
  /** Asked before each retry: false ends the task with its last failure (another task failed). */
  readonly mayContinue?: () => boolean;
  /** The task's span when tracing is on: each attempt gets a child span, handed to `attempt`. */
  readonly span?: Span | undefined;
}

/**
 * Runs `attempt` until it succeeds, fails with a TaskError that is not transient, or the
 * retries are used up. The TaskError thrown carries the number of attempts made, and its
 * message says so when there was more than one. `span` is the attempt's own span (NO_SPAN
 * without tracing), for an attempt that sends its traceparent on.
 */
export async function withRetries<T>(
  attempt: (n: number, span: Span) => Promise<T>,
  options: RetryOptions,
): Promise<{ readonly value: T; readonly attempts: number }> {
  const maxAttempts = 1 + Math.max(0, options.retries);
  for (let n = 1; ; n++) {
    let failure: TaskError;
    const span = options.span === undefined ? NO_SPAN : startAttemptSpan(options.span, n);
    try {
      const value = await attempt(n, span);
      endAttemptSpan(span, 'succeeded', null);
      return { value, attempts: n };
    } catch (error) {
      if (!(error instanceof TaskError)) {
        endAttemptSpan(span, 'failed', 'internal');
        throw error;
      }
      failure = error;
    }
    // "tried", not "attempts": a queued job counts its own attempts, and its reason shows both.
    const tried = n === 1 ? '' : ` (the task tried ${n} times)`;
    if (!failure.transient || n >= maxAttempts || (options.mayContinue !== undefined && !options.mayContinue())) {
      endAttemptSpan(span, 'failed', failure.code);
      throw failure.withAttempts(n, failure.message + tried);
    }
    const asked = failure.retryAfterMs;
    if (asked !== null && asked > MAX_RETRY_AFTER_MS) {
      endAttemptSpan(span, 'failed', failure.code);
      throw failure.withAttempts(
        n,
        `${failure.message}${tried}; not retried: Retry-After asks for ${Math.ceil(asked / 1000)} s, more than the ${MAX_RETRY_AFTER_MS / 1000} s this service waits`,
      );
    }
    endAttemptSpan(span, 'retried', failure.code);
    await sleep(asked ?? backoffMs(n));
  }
}

function startAttemptSpan(task: Span, n: number): Span {
  const span = task.child(`attempt ${n}`, 'client');
  span.setAttribute(ATTR.taskAttempt, n);
  return span;
}

/** `outcome` of this attempt: succeeded, retried (another attempt follows) or failed (the last one). */
function endAttemptSpan(span: Span, outcome: 'succeeded' | 'retried' | 'failed', code: string | null): void {
  if (!span.recording) return;
  span.setAttribute(ATTR.taskOutcome, outcome);
  if (code !== null) span.setError(code);
  span.end();
}

/** Full jitter: a uniform wait in [0, min(cap, first * 2^(n-1))] before retry n. */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_ATTEMPT_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (retry - 1));
  return Math.floor(random() * ceiling);
}

/** Seconds or an HTTP date; null when absent or unreadable. Capped so no timer overflows. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return null;
  const trimmed = text.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const date = Date.parse(trimmed);
    if (Number.isNaN(date)) return null;
    ms = Math.max(0, date - now);
  }
  // Anything beyond the cap is refused by withRetries anyway; a huge value must not reach a timer.
  return Math.min(ms, 2 ** 31 - 1);
}
