// What a DeliveryQuery selects, written once for the SQL stores (as a WHERE clause) and once for
// Redis, which filters in the client (as a predicate): the same rules in both.

import { epochMs } from './delivery-row.js';
import type { DeliveryRecord } from './record.js';
import type { Cursor, DeliveryQuery } from './store.js';

export interface SqlDialect {
  /** The placeholder of the next parameter: `?` or `$n`. */
  placeholder(index: number): string;
  /** A condition: `column`, lowercased, holds the (lowercased) text of `placeholder`. */
  contains(column: string, placeholder: string): string;
}

export const SQLITE: SqlDialect = {
  placeholder: () => '?',
  contains: (column, p) => `instr(lower(coalesce(${column}, '')), ${p}) > 0`,
};

export const POSTGRES: SqlDialect = {
  placeholder: (index) => `$${index}`,
  contains: (column, p) => `strpos(lower(coalesce(${column}, '')), ${p}) > 0`,
};

export interface SqlFilter {
  /** `WHERE …`, or empty; its text depends only on which filters are set, so it can key a statement cache. */
  readonly where: string;
  readonly params: (string | number)[];
}

/** The cursor's position as (epoch ms, id). */
export function cursorPosition(cursor: Cursor): { readonly ms: number; readonly id: string } {
  return { ms: epochMs(cursor.receivedAt, cursor.id), id: cursor.id };
}

export function sqlFilter(query: DeliveryQuery, dialect: SqlDialect): SqlFilter {
  const conditions: string[] = [];
  const params: (string | number)[] = [];
  const param = (value: string | number): string => {
    params.push(value);
    return dialect.placeholder(params.length);
  };
  if (query.endpoint !== undefined) conditions.push(`endpoint = ${param(query.endpoint)}`);
  if (query.verdict !== undefined) conditions.push(`verdict = ${param(query.verdict)}`);
  if (query.status !== undefined) conditions.push(`status = ${param(query.status)}`);
  if (query.since !== undefined) conditions.push(`received_ms >= ${param(query.since)}`);
  if (query.until !== undefined) conditions.push(`received_ms <= ${param(query.until)}`);
  if (query.after !== undefined) {
    const { ms, id } = cursorPosition(query.after);
    conditions.push(`(received_ms, id) < (${param(ms)}, ${param(id)})`);
  }
  if (query.text !== undefined && query.text !== '') {
    const needle = query.text.toLowerCase();
    conditions.push(`(${['id', 'deduplication_key', 'reason'].map((column) => dialect.contains(column, param(needle))).join(' OR ')})`);
  }
  return { where: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`, params };
}

/** Newest-first order of two deliveries' positions: negative when (aMs, aId) comes first. Ids compare as bytes, as the stores order them. */
export function newestFirst(aMs: number, aId: string, bMs: number, bId: string): number {
  if (aMs !== bMs) return bMs - aMs;
  return Buffer.compare(Buffer.from(bId, 'utf8'), Buffer.from(aId, 'utf8'));
}

/** Whether `record`, received at `ms`, is one `query` selects (its limit aside). */
export function selects(query: DeliveryQuery, record: DeliveryRecord, ms: number): boolean {
  if (query.endpoint !== undefined && record.endpoint !== query.endpoint) return false;
  if (query.verdict !== undefined && record.verdict !== query.verdict) return false;
  if (query.status !== undefined && record.status !== query.status) return false;
  if (query.since !== undefined && ms < query.since) return false;
  if (query.until !== undefined && ms > query.until) return false;
  if (query.after !== undefined) {
    const after = cursorPosition(query.after);
    if (newestFirst(ms, record.id, after.ms, after.id) <= 0) return false;
  }
  if (query.text !== undefined && query.text !== '') {
    const needle = query.text.toLowerCase();
    if (![record.id, record.deduplicationKey, record.reason].some((value) => value !== null && value.toLowerCase().includes(needle))) return false;
  }
  return true;
}

/** The page size a query asks for, as a whole number of at least 0 (Infinity: no bound). */
export function pageSize(query: DeliveryQuery): number {
  if (Number.isNaN(query.limit)) return 0;
  return Math.max(0, Math.min(Math.floor(query.limit), Number.MAX_SAFE_INTEGER));
}
