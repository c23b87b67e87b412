// Every process that runs a queue's jobs uses the same --queue-lock-duration. A job whose worker
// stopped without handing it back (kill -9, a crash) is resumed once its lock has expired and a
// stalled-job check has seen it twice; the checks run at the interval of the worker that makes
// them (BullMQ's stalledInterval, set to its lock duration). With one lock duration the job is
// resumed within about twice it (docs/queue.md). With two, a job locked by a worker with the
// longer one waits out that lock plus a check of the other: three lock durations and more.
//
// So each consumer announces its lock duration in the store, beside the queue, for twice that
// long, renewed every half of it; a consumer whose lock duration differs from one announced and
// not expired refuses to start. An announcement outlives its worker by at most twice its lock
// duration: by then every job that worker held is unlocked, and a worker with another lock
// duration may take the queue over.

import { formatDuration } from '../units.js';
import type { QueueObserver } from './observer.js';
import type { QueueSettings } from './settings.js';

/** Redis: beside BullMQ's keys of the queue (no job id is `endpoint-service`: ours end in `.<8 hex>`). */
export function lockDurationKey(queueName: string): string {
  return `bull:${queueName}:endpoint-service:lock-duration`;
}

/** KEYS[1] the announcement; ARGV[1] this consumer's lock duration in ms, ARGV[2] the announcement's life in ms. Returns the lock duration that holds. */
export const CLAIM_LOCK_DURATION_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] then return current end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]
`;

export const POSTGRES_LOCK_DURATION_TABLE = 'endpoint_service_lock_duration';

export const POSTGRES_CREATE_LOCK_DURATION_TABLE = `CREATE TABLE IF NOT EXISTS ${POSTGRES_LOCK_DURATION_TABLE} (
  queue text PRIMARY KEY,
  lock_ms bigint NOT NULL,
  expires_at timestamptz NOT NULL
)`;

/** $1 queue, $2 lock duration in ms, $3 the announcement's life in ms. Returns the lock duration that holds. */
export const POSTGRES_CLAIM_LOCK_DURATION = `WITH claimed AS (
  INSERT INTO ${POSTGRES_LOCK_DURATION_TABLE} AS t (queue, lock_ms, expires_at)
  VALUES ($1, $2, now() + ($3::bigint * interval '1 millisecond'))
  ON CONFLICT (queue) DO UPDATE SET lock_ms = EXCLUDED.lock_ms, expires_at = EXCLUDED.expires_at
  WHERE t.lock_ms = EXCLUDED.lock_ms OR t.expires_at < now()
  RETURNING lock_ms
)
SELECT lock_ms FROM claimed UNION ALL
SELECT lock_ms FROM ${POSTGRES_LOCK_DURATION_TABLE} WHERE queue = $1 AND NOT EXISTS (SELECT 1 FROM claimed)`;

/** How long an announcement lives unrenewed, for a lock duration of `lockMs`. */
export function announcementLifeMs(lockMs: number): number {
  return 2 * lockMs;
}

/** The line a consumer whose lock duration differs from the announced one stops with. */
export function disagreement(settings: QueueSettings, announcedMs: number): string {
  const announced = formatDuration(announcedMs);
  return (
    `--queue-lock-duration ${formatDuration(settings.lockDurationMs)} differs from the ${announced} of the processes running jobs of the queue "${settings.name}": ` +
    `give every worker (and serve that runs jobs) of a queue the same, or a job of a killed worker may wait longer than twice the lock duration; ` +
    `to change it, stop them all: the announced ${announced} is forgotten ${formatDuration(announcementLifeMs(announcedMs))} after the last of them stopped`
  );
}

/** How long a claim the store could not answer waits before it is asked again. */
const CLAIM_RETRY_MS = 1_000;

/**
 * A consumer's announcement: claimed before it takes its first job (a store that is down is
 * waited for), then renewed every half of the lock duration until stop().
 */
export class LockAnnouncement {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private warned = false;

  constructor(
    /** The store's claimLockDuration (store.ts). */
    private readonly store: { claimLockDuration(lockMs: number): Promise<number> },
    private readonly settings: QueueSettings,
    private readonly observer: Pick<QueueObserver, 'log'>,
  ) {}

  /** Resolves to null once claimed (the consumer may start), or to the line it refuses to start with; never while stopped before either. */
  async claim(): Promise<string | null> {
    const mine = this.settings.lockDurationMs;
    for (;;) {
      if (this.stopped) return new Promise(() => {});
      try {
        const held = await this.store.claimLockDuration(mine);
        if (held !== mine) return disagreement(this.settings, held);
        this.renew(mine);
        return null;
      } catch {
        // Down: the store's watch says so; the claim waits for it.
        await new Promise((resolve) => setTimeout(resolve, CLAIM_RETRY_MS).unref());
      }
    }
  }

  private renew(mine: number): void {
    this.timer = setInterval(() => {
      this.store.claimLockDuration(mine).then(
        (held) => {
          // Ours lapsed (a store down for longer than its life) and a consumer with another took the queue meanwhile.
          if (held !== mine && !this.warned) {
            this.warned = true;
            this.observer.log('warn', disagreement(this.settings, held));
          }
        },
        () => {},
      );
    }, mine / 2);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
  }
}
