// The delivery log in one SQLite file through node:sqlite: no server to run. Every process that
// writes (serve's cluster workers) opens a connection of its own; WAL and the busy timeout let
// them take turns, one transaction per batch.
//
// node:sqlite is taken with process.getBuiltinModule when a store is opened: a command that keeps
// no log never loads it (Node 22 prints an ExperimentalWarning when it is loaded), and the types
// below name only what Node 22.15 has.

import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import { DELIVERY_COLUMNS, recordOf, rowValues, sealedOf, upsertDeliverySql, type SqlValue } from './delivery-row.js';
import { pageSize, sqlFilter, SQLITE } from './delivery-query.js';
import type { TaskRecord } from './record.js';
import { decodeOutcome, encodeOutcome, newTicket, REPLAY_OUTCOME_TTL_MS } from './replay.js';
import { SQLITE_BUSY_TIMEOUT_MS, SQLITE_SCHEMA_VERSION, SQLITE_SETTINGS, SQLITE_TABLES, UPSERT_TASK_SQL } from './sqlite-schema.js';
import { storedRequest } from './sealed-request.js';
import { pruneGroupsSql, upsertGroupSql } from './sealed-groups.js';
import { namingErrors } from './store-errors.js';
import type { DeliveryStore, DeliveryWrite, StoredDelivery } from './store.js';
import { isTerminal, mergeTasks } from './task-merge.js';

type Row = Record<string, SqlValue>;

interface Statement {
  run(...params: SqlValue[]): { changes: number | bigint };
  get(...params: SqlValue[]): Row | undefined;
  all(...params: SqlValue[]): Row[];
}

interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}

interface SqliteModule {
  DatabaseSync: new (location: string) => Database;
}

/** SQLite's primary result codes met when opening (the extended code's low byte). */
const SQLITE_PERM = 3;
const SQLITE_BUSY = 5;
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_CORRUPT = 11;
const SQLITE_CANTOPEN = 14;
const SQLITE_NOTADB = 26;

const LISTED = DELIVERY_COLUMNS.filter((c) => c !== 'sealed');

/** Opens (making it if need be) the SQLite file `file`; throws an Error whose message is one sentence naming the file. */
export function openSqliteStore(file: string): DeliveryStore {
  const sqlite = process.getBuiltinModule('node:sqlite') as SqliteModule | undefined;
  if (sqlite === undefined)
    throw new Error(`the delivery store ${file} needs node:sqlite, which this Node.js ${process.version} lacks: use Node.js 22.15 or later`);
  let db: Database | null = null;
  try {
    db = new sqlite.DatabaseSync(file);
    db.exec(SQLITE_SETTINGS);
    makeSchema(db, file);
    return namingErrors(storeOn(db, file));
  } catch (error) {
    try {
      db?.close();
    } catch {
      // Closing what did not open adds nothing to the error that follows.
    }
    throw openError(file, error);
  }
}

class NewerSchemaError extends Error {}

function makeSchema(db: Database, file: string): void {
  inTransaction(db, () => {
    const version = Number(db.prepare('PRAGMA user_version').get()?.user_version ?? 0);
    if (version > SQLITE_SCHEMA_VERSION) {
      throw new NewerSchemaError(
        `the delivery store ${file} was made by a newer endpoint-service (schema version ${version}; this one knows ${SQLITE_SCHEMA_VERSION}): run that version, or give another file`,
      );
    }
    db.exec(SQLITE_TABLES);
    if (version < SQLITE_SCHEMA_VERSION) db.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION}`);
  });
}

/** BEGIN IMMEDIATE takes the write lock at once (waiting up to the busy timeout), so a batch never fails half-way on a lock. */
function inTransaction<T>(db: Database, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    try {
      db.exec('ROLLBACK');
    } catch {
      // SQLite may have rolled back already (a full disk); the first error is the one to report.
    }
    throw error;
  }
}

function openError(file: string, error: unknown): Error {
  if (error instanceof NewerSchemaError) return new Error(error.message);
  const message = error instanceof Error ? error.message : String(error);
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  const code = typeof errcode === 'number' ? errcode & 0xff : codeFromMessage(message);
  const said = `(SQLite: ${message})`;
  switch (code) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return new Error(`the delivery store ${file} is not a SQLite database or is damaged ${said}: move it away (a new one is made) or give another file`);
    case SQLITE_CANTOPEN:
      return new Error(`the delivery store ${file} cannot be opened or made: ${folderProblem(file) ?? `check the file's permissions ${said}`}`);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_IOERR:
      return new Error(
        `the delivery store ${file} cannot be written ${said}: ${folderProblem(file) ?? 'check that the file and its folder are writable by this user'}`,
      );
    case SQLITE_BUSY:
      return new Error(`the delivery store ${file} stayed locked by another process for more than ${SQLITE_BUSY_TIMEOUT_MS / 1000} s ${said}`);
    default:
      return new Error(`the delivery store ${file} cannot be used ${said}`);
  }
}

function codeFromMessage(message: string): number | null {
  if (/not a database/.test(message)) return SQLITE_NOTADB;
  if (/malformed/.test(message)) return SQLITE_CORRUPT;
  if (/unable to open/.test(message)) return SQLITE_CANTOPEN;
  if (/readonly/.test(message)) return SQLITE_READONLY;
  if (/locked|busy/.test(message)) return SQLITE_BUSY;
  return null;
}

/** What is wrong with the file's folder, if something is: SQLite only says it could not open. */
function folderProblem(file: string): string | null {
  const folder = path.dirname(path.resolve(file));
  if (!existsSync(folder)) return `its folder ${path.dirname(file)} does not exist`;
  try {
    accessSync(folder, constants.W_OK);
  } catch {
    return `its folder ${path.dirname(file)} is not writable by this user (SQLite keeps its -wal and -shm files beside the database)`;
  }
  return null;
}

/** The store's statements, prepared once. */
function statementsOf(db: Database) {
  return {
    upsertDelivery: db.prepare(upsertDeliverySql('deliveries', () => '?')),
    upsertTask: db.prepare(UPSERT_TASK_SQL),
    upsertGroup: db.prepare(upsertGroupSql('delivery_groups', () => '?')),
    group: db.prepare('SELECT sealed FROM delivery_groups WHERE id = ?'),
    pruneGroups: db.prepare(pruneGroupsSql('delivery_groups', 'deliveries', () => '?')),
    delivery: db.prepare(`SELECT ${DELIVERY_COLUMNS.join(', ')} FROM deliveries WHERE id = ?`),
    tasksOf: db.prepare('SELECT task FROM delivery_tasks WHERE delivery = ? ORDER BY rowid'),
    tasksOfMany: db.prepare('SELECT delivery, task FROM delivery_tasks WHERE delivery IN (SELECT value FROM json_each(?)) ORDER BY rowid'),
    counts: db.prepare(
      `SELECT 'verdict' AS kind, verdict AS name, count(*) AS n FROM deliveries WHERE received_ms >= ? GROUP BY verdict
       UNION ALL SELECT 'endpoint', endpoint, count(*) FROM deliveries WHERE received_ms >= ? GROUP BY endpoint`,
    ),
    pruneTasksBefore: db.prepare('DELETE FROM delivery_tasks WHERE delivery IN (SELECT id FROM deliveries WHERE received_ms < ?)'),
    pruneBefore: db.prepare('DELETE FROM deliveries WHERE received_ms < ?'),
    pruneTasksBeyond: db.prepare(
      'DELETE FROM delivery_tasks WHERE delivery IN (SELECT id FROM deliveries ORDER BY received_ms DESC, id DESC LIMIT -1 OFFSET ?)',
    ),
    pruneBeyond: db.prepare('DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries ORDER BY received_ms DESC, id DESC LIMIT -1 OFFSET ?)'),
    // Task writes whose delivery never came: by the time the deliveries of then are pruned, it will not.
    pruneOrphanTasks: db.prepare('DELETE FROM delivery_tasks WHERE written_ms < ? AND delivery NOT IN (SELECT id FROM deliveries)'),
    pruneTickets: db.prepare('DELETE FROM replay_tickets WHERE finished_ms < ? OR (finished_ms IS NULL AND requested_ms < ?)'),
  };
}

type Statements = ReturnType<typeof statementsOf>;

/** The statement that writes `write`, with its values. */
function valuesOf(statements: Statements, write: DeliveryWrite, now: number): { readonly statement: Statement; readonly values: SqlValue[] } {
  switch (write.kind) {
    case 'delivery':
      return { statement: statements.upsertDelivery, values: rowValues(write.record, write.sealed) };
    case 'task':
      return {
        statement: statements.upsertTask,
        values: [write.delivery, write.task.id, isTerminal(write.task.state) ? 1 : 0, JSON.stringify(write.task), now],
      };
    case 'sealed-group':
      return { statement: statements.upsertGroup, values: [write.id, now, write.sealed] };
  }
}

function storeOn(db: Database, file: string): DeliveryStore {
  const statements = statementsOf(db);
  /** One statement per set of filters used, made the first time that set is asked for. */
  const listings = new Map<string, Statement>();
  const listing = (sql: string): Statement => {
    let statement = listings.get(sql);
    if (statement === undefined) listings.set(sql, (statement = db.prepare(sql)));
    return statement;
  };
  let closed = false;
  // A write that comes after close (a flush racing shutdown) says so, not "statement has been finalized".
  const live = (): void => {
    if (closed) throw new Error('the store was closed');
  };

  const writeValues = (write: DeliveryWrite, now: number) => valuesOf(statements, write, now);

  return {
    description: `SQLite at ${file}`,
    async write(batch) {
      live();
      if (batch.length === 0) return;
      const now = Date.now();
      // Converted before the transaction: a record that cannot be stored fails the batch without taking the lock.
      const writes = batch.map((w) => writeValues(w, now));
      inTransaction(db, () => {
        for (const w of writes) w.statement.run(...w.values);
      });
    },
    async list(query) {
      live();
      const limit = pageSize(query);
      if (limit === 0) return [];
      const filter = sqlFilter(query, SQLITE);
      const rows = listing(`SELECT ${LISTED.join(', ')} FROM deliveries ${filter.where} ORDER BY received_ms DESC, id DESC LIMIT ?`).all(
        ...filter.params,
        limit,
      );
      if (rows.length === 0) return [];
      const written = new Map<string, TaskRecord[]>();
      for (const row of statements.tasksOfMany.all(JSON.stringify(rows.map((r) => r.id)))) {
        const id = String(row.delivery);
        written.set(id, [...(written.get(id) ?? []), JSON.parse(String(row.task)) as TaskRecord]);
      }
      return rows.map((row) => {
        const record = recordOf(row);
        return { ...record, tasks: mergeTasks(record.tasks, written.get(record.id) ?? []) };
      });
    },
    async get(id): Promise<StoredDelivery | null> {
      live();
      const row = statements.delivery.get(id);
      if (row === undefined) return null;
      const record = recordOf(row);
      const written = statements.tasksOf.all(id).map((r) => JSON.parse(String(r.task)) as TaskRecord);
      const sealed = await storedRequest(sealedOf(row), (group) => sealedOf(statements.group.get(group) ?? {}));
      return { record: { ...record, tasks: mergeTasks(record.tasks, written) }, sealed };
    },
    async counts(since) {
      live();
      const verdicts: Record<string, number> = {};
      const endpoints: Record<string, number> = {};
      for (const row of statements.counts.all(since, since)) (row.kind === 'verdict' ? verdicts : endpoints)[String(row.name)] = Number(row.n);
      return { verdicts, endpoints };
    },
    async prune(before, keep) {
      live();
      const now = Date.now();
      return inTransaction(db, () => {
        statements.pruneTasksBefore.run(before);
        let gone = Number(statements.pruneBefore.run(before).changes);
        if (Number.isFinite(keep)) {
          const beyond = Math.max(0, Math.floor(keep));
          statements.pruneTasksBeyond.run(beyond);
          gone += Number(statements.pruneBeyond.run(beyond).changes);
        }
        statements.pruneOrphanTasks.run(before);
        statements.pruneGroups.run(now);
        statements.pruneTickets.run(now - REPLAY_OUTCOME_TTL_MS, before);
        return gone;
      });
    },
    ...replayTickets(db, live),
    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

/** Replay tickets (replay.ts): `deliveries replay` asks, a running serve claims and answers. */
function replayTickets(db: Database, live: () => void): Pick<DeliveryStore, 'requestReplay' | 'claimReplay' | 'finishReplay' | 'replayOutcome'> {
  const statements = {
    request: db.prepare('INSERT INTO replay_tickets (ticket, delivery, requested_ms) VALUES (?, ?, ?)'),
    waiting: db.prepare('SELECT 1 AS waiting FROM replay_tickets WHERE claimed_ms IS NULL LIMIT 1'),
    // One statement: SQLite runs it under the write lock, so two connections never take the same ticket.
    claim: db.prepare(
      `UPDATE replay_tickets SET claimed_ms = ?
       WHERE seq = (SELECT seq FROM replay_tickets WHERE claimed_ms IS NULL ORDER BY seq LIMIT 1)
       RETURNING ticket, delivery`,
    ),
    finish: db.prepare('UPDATE replay_tickets SET finished_ms = ?, outcome = ? WHERE ticket = ?'),
    outcome: db.prepare('SELECT outcome FROM replay_tickets WHERE ticket = ?'),
  };
  return {
    async requestReplay(delivery) {
      live();
      const ticket = newTicket();
      statements.request.run(ticket, delivery, Date.now());
      return ticket;
    },
    async claimReplay() {
      live();
      // Serve asks twice a second on the thread that answers requests: a read never waits for the
      // writer thread's lock (WAL), a claim does, so only a ticket that is there is claimed.
      if (statements.waiting.get() === undefined) return null;
      const row = statements.claim.get(Date.now());
      return row === undefined ? null : { ticket: String(row.ticket), delivery: String(row.delivery) };
    },
    async finishReplay(ticket, outcome) {
      live();
      statements.finish.run(Date.now(), encodeOutcome(outcome), ticket);
    },
    async replayOutcome(ticket) {
      live();
      const row = statements.outcome.get(ticket);
      if (row?.outcome === null || row?.outcome === undefined) return null;
      return decodeOutcome(String(row.outcome));
    },
  };
}
