// The queue's settings, already checked by the command line (src/cli/queue-options.ts).

import type { QueueKey } from './seal.js';

export type QueueBackend = 'redis' | 'postgres';

export interface QueueSettings {
  /** As given: may hold a password, so never logged. */
  readonly url: string;
  readonly backend: QueueBackend;
  /** BullMQ's queue name: one per application (several applications may share a Redis). */
  readonly name: string;
  /** The current key first, then ENDPOINT_SERVICE_QUEUE_KEY_PREVIOUS. */
  readonly keys: readonly QueueKey[];
  /** Attempts of a run in all, first included (--queue-attempts). */
  readonly attempts: number;
  /** Base of the full-jitter backoff between attempts (--queue-backoff). */
  readonly backoffMs: number;
  /** How long a worker's lock on a job lasts unrenewed: after a crash, the job waits that long. */
  readonly lockDurationMs: number;
  /** Jobs run at once by one process. */
  readonly concurrency: number;
  /** serve: also run jobs (--no-queue-consume: false). */
  readonly consume: boolean;
  /** serve --queue-fallback in-process: run the tasks here when the store cannot take them. */
  readonly fallback: 'none' | 'in-process';
  readonly onConfigChange: 'current' | 'strict';
  readonly emailRedelivery: 'at-most-once' | 'at-least-once';
  /** How long failed jobs are kept (--queue-retention): the jobs' removeOnFail, and the consumers' hourly clean. */
  readonly retentionMs: number;
}

/**
 * How long serve waits for the store, all told, before answering 503: for the job's
 * acknowledgement, and then, when it does not come, for the store to confirm the job void (fate.ts).
 */
export const ENQUEUE_TIMEOUT_MS = 2_000;

/**
 * What of ENQUEUE_TIMEOUT_MS is kept for the void: the acknowledgement is waited for until this
 * much is left. The void goes on the add's own connection, right behind it, so a store that
 * answers the add answers the void at once; waiting 2 s more for it made the 503 take 4 s.
 */
export const VOID_RESERVE_MS = 500;
/** The longest wait between two attempts of a queued job, whatever the backoff or Retry-After. */
export const MAX_JOB_BACKOFF_MS = 30 * 60_000;
/** A job that has stalled (its worker died) more often than this fails instead of looping. */
export const MAX_STALLED_COUNT = 2;
/** Completed jobs say nothing `jobs` needs for long: an hour, and at most the last 1000. */
export const COMPLETED_RETENTION = { age: 3600, count: 1000 } as const;

export type BackendOf = { readonly ok: true; readonly backend: QueueBackend } | { readonly ok: false; readonly problem: string };

/**
 * The store a URL names, or why none (said after the option's name): `redis://`, `rediss://`;
 * `postgres://`, `postgresql://` (experimental).
 */
export function backendOf(url: string): BackendOf {
  let scheme: string;
  try {
    scheme = new URL(url).protocol;
  } catch {
    return { ok: false, problem: 'is not a URL (such as redis://127.0.0.1:6379)' };
  }
  if (scheme === 'redis:' || scheme === 'rediss:') return { ok: true, backend: 'redis' };
  if (scheme === 'postgres:' || scheme === 'postgresql:') return { ok: true, backend: 'postgres' };
  return { ok: false, problem: `has the scheme "${scheme.slice(0, -1)}"; expected redis://, rediss://, postgres:// or postgresql://` };
}
