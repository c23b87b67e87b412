// The writer between the request path and the store: a request's end adds one entry to a
// buffer and returns; a timer writes the buffer in batches (each one transaction, one pipeline)
// every FLUSH_MS, sealing the kept requests there, off the request path. A store that is down
// or slow never delays an answer: what it cannot take is counted and dropped, and the buffer is
// bounded, so a store that never answers costs at most MAX_PENDING entries of memory. What a
// kill -9 loses is what the buffer held: at most the last FLUSH_MS of deliveries.

import type { QueueKey } from '../queue/seal.js';
import type { LogEntry } from './log-entry.js';
import type { TaskRecord } from './record.js';
import type { DeliveryStore } from './store.js';
import { isTerminal, mergeTasks } from './task-merge.js';
import { writerHere, type BatchWriter } from './writer.js';

export const FLUSH_MS = 100;
const MAX_BATCH = 500;
export const MAX_PENDING = 20_000;

export type { LogEntry } from './log-entry.js';

export interface DropSink {
  /** `count` entries were not written; `reason` for the log line. */
  dropped(count: number, reason: string): void;
}

export class DeliveryLog {
  private pending: LogEntry[] = [];
  /**
   * Where in `pending` each delivery with unfinished tasks is, by id. A task's outcome that comes
   * before its delivery is written (an in-process task answered within FLUSH_MS) goes into the
   * record rather than into a write of its own: one row or hash per delivery instead of two.
   * Emptied whenever `pending` is cut; an outcome that comes later is written as an update.
   */
  private readonly unwritten = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  /** Entries a flush has taken from `pending` and not yet handed to the store: they count towards MAX_PENDING. */
  private inFlight = 0;
  /** close() has begun: it writes what remains itself, so no turn is scheduled beside it. */
  private closing = false;
  private closed = false;

  constructor(
    /** Read by the page, replays and retention; written through `writer`. */
    readonly store: DeliveryStore,
    /** Seals kept requests; null: requests are not kept (no key). */
    private readonly keys: readonly QueueKey[] | null,
    private readonly drops: DropSink,
    private readonly writer: BatchWriter = writerHere(store, keys),
  ) {}

  get keepsRequests(): boolean {
    return this.keys !== null;
  }

  get sealingKeys(): readonly QueueKey[] | null {
    return this.keys;
  }

  add(entry: LogEntry): void {
    if (this.closed) return;
    if (entry.kind === 'task' && this.mergedIntoPending(entry.delivery, entry.task)) return;
    if (this.pending.length + this.inFlight >= MAX_PENDING)
      return this.drops.dropped(1, 'the buffer of unwritten deliveries is full: the store is not keeping up');
    if (entry.kind === 'delivery' && entry.record.tasks.some((t) => !isTerminal(t.state))) this.unwritten.set(entry.record.id, this.pending.length);
    this.pending.push(entry);
    if (this.timer === null && this.writing === null && !this.closing) this.schedule();
  }

  /** Whether `task` went into its delivery's record, still in `pending`. */
  private mergedIntoPending(delivery: string, task: TaskRecord): boolean {
    const at = this.unwritten.get(delivery);
    if (at === undefined) return false;
    const entry = this.pending[at];
    if (entry?.kind !== 'delivery' || entry.record.id !== delivery) return false;
    this.pending[at] = { ...entry, record: { ...entry.record, tasks: mergeTasks(entry.record.tasks, [task]) } };
    return true;
  }

  /**
   * Writes every FLUSH_MS, counted from the start of the last write: what arrives while a batch
   * is written waits for the next turn, so that a batch holds FLUSH_MS of deliveries. Written as
   * soon as it arrived, it would be the few of one write's round trip, and each batch's fixed
   * cost (its transaction or script, its message to the writer thread) would be shared by few.
   */
  private schedule(delay: number = FLUSH_MS): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      const started = performance.now();
      this.writing = this.flush().finally(() => {
        this.writing = null;
        if (this.pending.length > 0 && !this.closing) this.schedule(Math.max(0, FLUSH_MS - (performance.now() - started)));
      });
    }, delay);
    // A buffer waiting to be written never keeps a process alive: close() writes it.
    this.timer.unref();
  }

  /** Writes what is pending now, MAX_BATCH entries at a time. */
  private async flush(): Promise<void> {
    const entries = this.pending;
    this.pending = [];
    this.unwritten.clear();
    this.inFlight = entries.length;
    for (let at = 0; at < entries.length; at += MAX_BATCH) {
      const batch = entries.length <= MAX_BATCH ? entries : entries.slice(at, at + MAX_BATCH);
      try {
        await this.writer.write(batch);
      } catch (error) {
        this.drops.dropped(batch.length, error instanceof Error ? error.message : String(error));
      }
      this.inFlight -= batch.length;
    }
  }

  /** Removes deliveries received before `before` and all but the newest `keep`; the count removed. */
  prune(before: number, keep: number): Promise<number> {
    return this.writer.prune(before, keep);
  }

  /** Writes what is buffered, then closes the store. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.writing;
    while (this.pending.length > 0) await this.flush();
    this.closed = true;
    await this.writer.close();
    await this.store.close();
  }
}
