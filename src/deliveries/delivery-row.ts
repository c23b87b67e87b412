// A delivery as a row of the SQL stores (SQLite, PostgreSQL): the record's scalar fields as
// columns, so they can be filtered and indexed; its tasks as JSON; the sealed request as given.

import type { DeliveryRecord, TaskRecord, Verdict } from './record.js';

/** In the order of rowValues. */
export const DELIVERY_COLUMNS = [
  'id',
  'received_ms',
  'received_at',
  'endpoint',
  'method',
  'path',
  'client',
  'verdict',
  'status',
  'reason',
  'duration_ms',
  'deduplication_key',
  'replay_of',
  'job',
  'request',
  'tasks',
  'sealed',
] as const;

export type SqlValue = string | number | null;

/**
 * The insert of a delivery into `table`, `placeholder(n)` naming the n-th parameter (1-based). A
 * delivery written again (the same batch written twice) replaces its row.
 */
export function upsertDeliverySql(table: string, placeholder: (n: number) => string): string {
  const updates = DELIVERY_COLUMNS.filter((c) => c !== 'id').map((c) => `${c} = EXCLUDED.${c}`);
  return `INSERT INTO ${table} (${DELIVERY_COLUMNS.join(', ')}) VALUES (${DELIVERY_COLUMNS.map((_, i) => placeholder(i + 1)).join(', ')})
ON CONFLICT (id) DO UPDATE SET ${updates.join(', ')}`;
}

/** receivedAt as epoch milliseconds, the order of the log. */
export function epochMs(receivedAt: string, delivery: string): number {
  const ms = Date.parse(receivedAt);
  if (!Number.isFinite(ms)) throw new Error(`delivery ${delivery} has receivedAt ${JSON.stringify(receivedAt)}, which is not an ISO 8601 time`);
  return ms;
}

export function rowValues(record: DeliveryRecord, sealed: string | null): SqlValue[] {
  return [
    record.id,
    epochMs(record.receivedAt, record.id),
    record.receivedAt,
    record.endpoint,
    record.method,
    record.path,
    record.client,
    record.verdict,
    record.status,
    record.reason,
    record.durationMs,
    record.deduplicationKey,
    record.replayOf,
    record.job,
    record.request,
    JSON.stringify(record.tasks),
    sealed,
  ];
}

const text = (value: unknown): string => String(value);
const textOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

/** The record of a row read back (without its task writes merged in). */
export function recordOf(row: Readonly<Record<string, unknown>>): DeliveryRecord {
  return {
    id: text(row.id),
    receivedAt: text(row.received_at),
    endpoint: text(row.endpoint),
    method: text(row.method),
    path: text(row.path),
    client: text(row.client),
    verdict: text(row.verdict) as Verdict,
    status: Number(row.status),
    reason: textOrNull(row.reason),
    durationMs: Number(row.duration_ms),
    deduplicationKey: textOrNull(row.deduplication_key),
    replayOf: textOrNull(row.replay_of),
    job: textOrNull(row.job),
    tasks: JSON.parse(text(row.tasks)) as TaskRecord[],
    request: row.request === 'sealed' ? 'sealed' : 'not-kept',
  };
}

export function sealedOf(row: Readonly<Record<string, unknown>>): string | null {
  return textOrNull(row.sealed);
}
