// The delivery log in PostgreSQL, for a service that keeps its state there: every instance
// writes the same tables, so they keep one log. pg is loaded when a store is opened, as the queue
// loads it, through the few calls typed below (the package ships no types of its own).

import { DELIVERY_COLUMNS, recordOf, rowValues, sealedOf, upsertDeliverySql } from './delivery-row.js';
import { pageSize, POSTGRES, sqlFilter } from './delivery-query.js';
import type { DeliveryRecord, TaskRecord } from './record.js';
import { decodeOutcome, encodeOutcome, newTicket, REPLAY_OUTCOME_TTL_MS } from './replay.js';
import { POSTGRES_SCHEMA_VERSION, postgresMeta, postgresStatements, postgresTables, quoteIdentifier } from './postgres-schema.js';
import { storedRequest } from './sealed-request.js';
import { namingErrors } from './store-errors.js';
import { withoutPassword } from './store-url.js';
import type { DeliveryStore, DeliveryWrite } from './store.js';
import { isTerminal, mergeTasks } from './task-merge.js';

interface PgResult {
  rows: Record<string, unknown>[];
}
interface PgClient {
  query(text: string, values?: readonly unknown[]): Promise<PgResult>;
  on(event: 'error', listener: (error: Error) => void): void;
  /** true: the connection is closed rather than reused. */
  release(destroy?: boolean): void;
}
interface PgPool {
  query(text: string, values?: readonly unknown[]): Promise<PgResult>;
  connect(): Promise<PgClient>;
  on(event: 'error', listener: (error: Error) => void): void;
  on(event: 'connect', listener: (client: PgClient) => void): void;
  end(): Promise<void>;
}
const PG_MODULE = 'pg';

/** Longest wait for a connection. */
const CONNECT_TIMEOUT_MS = 2_000;
/** A statement held this long (a lock, a stalled server) fails rather than holding the log's writer. */
const STATEMENT_TIMEOUT_MS = 10_000;

/** Connects to `url` and makes the tables in `schema` if need be; rejects with one sentence naming the store when it cannot. */
export async function openPostgresStore(url: string, schema: string): Promise<DeliveryStore> {
  const pg = (await import(PG_MODULE)) as { default: { Pool: new (config: object) => PgPool } };
  const description = `PostgreSQL at ${withoutPassword(url)}, schema ${schema}`;
  // Two connections: the log's writer and one reader (the page, a replay) at a time.
  const pool = new pg.default.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, statement_timeout: STATEMENT_TIMEOUT_MS });
  // An idle connection that breaks is dropped by the pool; the next query fails or reconnects.
  pool.on('error', () => {});
  // A connection that breaks while checked out emits 'error' on its client: unheard, that would
  // end the process. Its query fails instead, and the log counts the batch as dropped.
  pool.on('connect', (client) => client.on('error', () => {}));
  const s = quoteIdentifier(schema);
  try {
    await inTransaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`endpoint-service deliveries ${schema}`]);
      await client.query(postgresMeta(s));
      const version = Number((await client.query(`SELECT value FROM ${s}.meta WHERE key = 'schema_version'`)).rows[0]?.value ?? 0);
      if (version > POSTGRES_SCHEMA_VERSION) {
        throw new NewerSchemaError(
          `${description} was made by a newer endpoint-service (schema version ${version}; this one knows ${POSTGRES_SCHEMA_VERSION}): run that version, or give another schema`,
        );
      }
      await client.query(postgresTables(s));
    });
  } catch (error) {
    await pool.end().catch(() => {});
    throw openError(description, error);
  }
  return namingErrors(storeOn(pool, s, description));
}

class NewerSchemaError extends Error {}

function openError(description: string, error: unknown): Error {
  if (error instanceof NewerSchemaError) return new Error(error.message);
  const message = error instanceof Error ? error.message : String(error);
  // A SQLSTATE is PostgreSQL's own answer; anything else never reached it.
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return new Error(`${description} refused to make the delivery tables: ${message}`);
  return new Error(`${description} cannot be reached: ${message}`);
}

async function inTransaction<T>(pool: PgPool, work: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    client.release();
    return result;
  } catch (error) {
    // A connection that cannot even roll back is not given to the next caller.
    const clean = await client.query('ROLLBACK').then(
      () => true,
      () => false,
    );
    client.release(!clean);
    throw error;
  }
}

const LISTED = DELIVERY_COLUMNS.filter((c) => c !== 'sealed');

function withWritten(row: Record<string, unknown>): DeliveryRecord {
  const record = recordOf(row);
  const written = (row.written as string[]).map((json) => JSON.parse(json) as TaskRecord);
  return { ...record, tasks: mergeTasks(record.tasks, written) };
}

/** The statement that writes `w`, with its values. */
function queryOf(w: DeliveryWrite, sql: ReturnType<typeof postgresStatements>, upsertDelivery: string, now: number): { text: string; values: unknown[] } {
  switch (w.kind) {
    case 'delivery':
      return { text: upsertDelivery, values: rowValues(w.record, w.sealed) };
    case 'task':
      return { text: sql.upsertTask, values: [w.delivery, w.task.id, isTerminal(w.task.state), JSON.stringify(w.task), now] };
    case 'sealed-group':
      return { text: sql.upsertGroup, values: [w.id, now, w.sealed] };
  }
}

/** A group's sealed blob; null when it is gone. */
async function groupBlob(pool: PgPool, sql: ReturnType<typeof postgresStatements>, group: string): Promise<string | null> {
  return sealedOf((await pool.query(sql.group, [group])).rows[0] ?? {});
}

function storeOn(pool: PgPool, s: string, description: string): DeliveryStore {
  const sql = postgresStatements(s);
  const upsertDelivery = upsertDeliverySql(`${s}.deliveries`, (n) => `$${n}`);
  let closed = false;
  return {
    description,
    async write(batch) {
      if (batch.length === 0) return;
      const now = Date.now();
      // Converted before the transaction: a record that cannot be stored fails the batch without a round trip.
      const writes = batch.map((w) => queryOf(w, sql, upsertDelivery, now));
      await inTransaction(pool, async (client) => {
        for (const w of writes) await client.query(w.text, w.values);
      });
    },
    async list(query) {
      const limit = pageSize(query);
      if (limit === 0) return [];
      const filter = sqlFilter(query, POSTGRES);
      const { rows } = await pool.query(
        `SELECT ${LISTED.map((c) => `d.${c}`).join(', ')}, ${sql.tasksOf('d.id')} FROM ${s}.deliveries d ${filter.where}
         ORDER BY d.received_ms DESC, d.id DESC LIMIT $${filter.params.length + 1}`,
        [...filter.params, limit],
      );
      return rows.map(withWritten);
    },
    async get(id) {
      const { rows } = await pool.query(
        `SELECT ${DELIVERY_COLUMNS.map((c) => `d.${c}`).join(', ')}, ${sql.tasksOf('d.id')} FROM ${s}.deliveries d WHERE d.id = $1`,
        [id],
      );
      const row = rows[0];
      return row === undefined ? null : { record: withWritten(row), sealed: await storedRequest(sealedOf(row), (group) => groupBlob(pool, sql, group)) };
    },
    async counts(since) {
      const verdicts: Record<string, number> = {};
      const endpoints: Record<string, number> = {};
      for (const row of (await pool.query(sql.counts, [since])).rows) (row.kind === 'verdict' ? verdicts : endpoints)[String(row.name)] = Number(row.n);
      return { verdicts, endpoints };
    },
    async prune(before, keep) {
      const now = Date.now();
      return inTransaction(pool, async (client) => {
        let gone = Number((await client.query(sql.pruneBefore, [before])).rows[0]?.n ?? 0);
        if (Number.isFinite(keep)) gone += Number((await client.query(sql.pruneBeyond, [Math.max(0, Math.floor(keep))])).rows[0]?.n ?? 0);
        await client.query(sql.pruneOrphanTasks, [before]);
        await client.query(sql.pruneGroups, [now]);
        await client.query(sql.pruneTickets, [now - REPLAY_OUTCOME_TTL_MS, before]);
        return gone;
      });
    },
    async requestReplay(delivery) {
      const ticket = newTicket();
      await pool.query(sql.requestReplay, [ticket, delivery, Date.now()]);
      return ticket;
    },
    async claimReplay() {
      const row = (await pool.query(sql.claimReplay, [Date.now()])).rows[0];
      return row === undefined ? null : { ticket: String(row.ticket), delivery: String(row.delivery) };
    },
    async finishReplay(ticket, outcome) {
      await pool.query(sql.finishReplay, [Date.now(), encodeOutcome(outcome), ticket]);
    },
    async replayOutcome(ticket) {
      const outcome = (await pool.query(sql.replayOutcome, [ticket])).rows[0]?.outcome;
      return typeof outcome === 'string' ? decodeOutcome(outcome) : null;
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
