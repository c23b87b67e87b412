// Where deliveries are kept: the embedded SQLite file (node:sqlite), PostgreSQL or Redis. One
// interface, so the log, the CLI and the page never know which. Every method may reject when
// the store cannot be reached; the log counts such a write as dropped and goes on.

import type { DeliveryRecord, TaskRecord, Verdict } from './record.js';

/** What the log hands a store, in batches, in the order things happened. */
export type DeliveryWrite =
  /** A delivery, once its answer is decided; its request sealed (null: not kept). */
  | { readonly kind: 'delivery'; readonly record: DeliveryRecord; readonly sealed: string | null }
  /**
   * A task of a delivery changed state after the delivery was written (a background run, a
   * worker): it replaces the task of the same id, unless that one has ended already and this one
   * has not (a late `running` never hides a `succeeded`). May arrive before its delivery.
   */
  | { readonly kind: 'task'; readonly delivery: string; readonly task: TaskRecord }
  /**
   * Requests sealed together (sealed-request.ts), named by the deliveries of the same batch that
   * follow it: kept at least as long as any of them.
   */
  | { readonly kind: 'sealed-group'; readonly id: string; readonly sealed: string };

export interface DeliveryQuery {
  readonly endpoint?: string;
  readonly verdict?: Verdict;
  readonly status?: number;
  /** Epoch milliseconds, inclusive. */
  readonly since?: number;
  readonly until?: number;
  /** Case-insensitive substring of the id, the deduplication key or the reason. */
  readonly text?: string;
  /** The page after this one: deliveries older than this (receivedAt, then id). */
  readonly after?: Cursor;
  readonly limit: number;
}

/** A position in the newest-first order. */
export interface Cursor {
  readonly receivedAt: string;
  readonly id: string;
}

export interface StoredDelivery {
  /** With its tasks' latest states merged in. */
  readonly record: DeliveryRecord;
  /** The sealed request (sealed-request.ts), with its group's blob when it was sealed in one; null when not kept. */
  readonly sealed: string | null;
}

/** A replay asked for by `deliveries replay`, picked up by a running serve. */
export interface ReplayTicket {
  readonly ticket: string;
  readonly delivery: string;
}

export type ReplayOutcome = { readonly ok: true; readonly delivery: string } | { readonly ok: false; readonly error: string };

export interface DeliveryStore {
  /** For the line after the ready line and for errors: "SQLite at .endpoint-service/deliveries.db". */
  readonly description: string;
  write(batch: readonly DeliveryWrite[]): Promise<void>;
  /** Newest first (receivedAt, then id, both descending). */
  list(query: DeliveryQuery): Promise<DeliveryRecord[]>;
  get(id: string): Promise<StoredDelivery | null>;
  /** Counts per verdict and per endpoint of the deliveries received since `since` (epoch ms). */
  counts(since: number): Promise<{ readonly verdicts: Readonly<Record<string, number>>; readonly endpoints: Readonly<Record<string, number>> }>;
  /** Removes deliveries received before `before` (epoch ms), then the oldest beyond `keep`; returns how many went. */
  prune(before: number, keep: number): Promise<number>;
  /** Queues a replay of `delivery`; returns its ticket. */
  requestReplay(delivery: string): Promise<string>;
  /** Takes the oldest replay nobody has taken, atomically: two serves never take the same. */
  claimReplay(): Promise<ReplayTicket | null>;
  finishReplay(ticket: string, outcome: ReplayOutcome): Promise<void>;
  /** null while the replay is waiting or running. */
  replayOutcome(ticket: string): Promise<ReplayOutcome | null>;
  close(): Promise<void>;
}
