// Failed jobs are kept for --queue-retention. The store applies a job's removeOnFail only when
// another job fails, so a queue whose jobs stop failing would keep its failed set for ever, and
// neither BullMQ nor its PostgreSQL backend has a timer of its own: every consumer removes the
// failed jobs older than the retention when it starts and about hourly after. Several consumers
// doing so is harmless: a removal of what is already gone removes nothing.

import type { Queue } from 'bullmq';
import { describeError } from '../errors.js';
import { formatAge } from '../units.js';
import type { QueueObserver } from './observer.js';

const SWEEP_INTERVAL_MS = 60 * 60_000;
/** While the store cannot be reached, how often to look whether it is back, to sweep then. */
const DOWN_RECHECK_MS = 30_000;
/** Spread over a few minutes, so that consumers started together do not all sweep at once. */
const SWEEP_JITTER_MS = 5 * 60_000;

export class RetentionSweeper {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly queue: Queue,
    private readonly retentionMs: number,
    private readonly observer: QueueObserver,
    /**
     * Whether the store answers now. While it does not, there is nothing to sweep and nothing
     * new to say (the store's own watch logs it as unreachable): the sweep waits for it.
     */
    private readonly reachable: () => Promise<boolean> = async () => true,
  ) {}

  /** Sweeps now, then about every hour until stop(). The timer keeps no process alive. */
  start(): void {
    this.schedule(0);
  }

  /** Removes the failed jobs that finished longer than the retention ago; how many. */
  async sweep(): Promise<number> {
    const removed = await this.queue.clean(this.retentionMs, 0, 'failed');
    if (removed.length > 0)
      this.observer.log('info', 'removed failed jobs older than --queue-retention', { count: removed.length, retention: formatAge(this.retentionMs) });
    return removed.length;
  }

  /** No more sweeps. One under way is left to the store's closing (a store that is down would keep it waiting). */
  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.sweepOnce();
    }, delayMs);
    this.timer.unref();
  }

  private async sweepOnce(): Promise<void> {
    const again = () => this.schedule(SWEEP_INTERVAL_MS + Math.floor(Math.random() * SWEEP_JITTER_MS));
    const down = async () => !(await this.reachable().catch(() => false));
    if (await down()) return this.schedule(DOWN_RECHECK_MS);
    if (this.stopped) return;
    try {
      await this.sweep();
      again();
    } catch (error) {
      if (this.stopped) return;
      // Lost while sweeping: the store's watch says so; sweep once it is back.
      if (await down()) return this.schedule(DOWN_RECHECK_MS);
      this.observer.log('warn', 'the failed jobs older than --queue-retention could not be removed; trying again in about an hour', {
        reason: describeError(error),
      });
      again();
    }
  }
}
