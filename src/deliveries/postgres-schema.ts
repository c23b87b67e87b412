// The PostgreSQL store's tables, in a schema of their own (--deliveries-schema): made on first
// open, under an advisory lock, since two serve workers starting at once would otherwise race
// on CREATE … IF NOT EXISTS (it is not safe against a concurrent create). The schema's version
// is a row of its meta table.

import { pruneGroupsSql, upsertGroupSql } from './sealed-groups.js';

/**
 * What this code writes; a schema of a higher version was made by a newer endpoint-service. 2 added
 * delivery_groups (requests sealed together): a schema of version 1 gains the table when opened.
 */
export const POSTGRES_SCHEMA_VERSION = 2;

/** `name` as an SQL identifier, whatever it holds. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The schema and its meta table, where the version is read before anything else is made. */
export function postgresMeta(s: string): string {
  return `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.meta (key text PRIMARY KEY, value text NOT NULL);
`;
}

/** Ids are compared as bytes (COLLATE "C"), as SQLite and Redis order them, so the cursor means the same on every store. */
export function postgresTables(s: string): string {
  return `
CREATE TABLE IF NOT EXISTS ${s}.deliveries (
  id text COLLATE "C" PRIMARY KEY,
  received_ms bigint NOT NULL,
  received_at text NOT NULL,
  endpoint text NOT NULL,
  method text NOT NULL,
  path text NOT NULL,
  client text NOT NULL,
  verdict text NOT NULL,
  status integer NOT NULL,
  reason text,
  duration_ms double precision NOT NULL,
  deduplication_key text,
  replay_of text,
  job text,
  request text NOT NULL,
  tasks text NOT NULL,
  sealed text
);
CREATE INDEX IF NOT EXISTS deliveries_newest ON ${s}.deliveries (received_ms DESC, id DESC);
CREATE INDEX IF NOT EXISTS deliveries_by_endpoint ON ${s}.deliveries (endpoint, received_ms DESC, id DESC);
CREATE INDEX IF NOT EXISTS deliveries_by_verdict ON ${s}.deliveries (verdict, received_ms DESC, id DESC);
CREATE TABLE IF NOT EXISTS ${s}.delivery_tasks (
  delivery text COLLATE "C" NOT NULL,
  task_id text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  terminal boolean NOT NULL,
  task text NOT NULL,
  written_ms bigint NOT NULL,
  PRIMARY KEY (delivery, task_id)
);
CREATE TABLE IF NOT EXISTS ${s}.delivery_groups (
  id text COLLATE "C" PRIMARY KEY,
  written_ms bigint NOT NULL,
  sealed text NOT NULL
);
CREATE TABLE IF NOT EXISTS ${s}.replay_tickets (
  seq bigint GENERATED ALWAYS AS IDENTITY,
  ticket text PRIMARY KEY,
  delivery text NOT NULL,
  requested_ms bigint NOT NULL,
  claimed_ms bigint,
  finished_ms bigint,
  outcome text
);
CREATE INDEX IF NOT EXISTS replay_tickets_waiting ON ${s}.replay_tickets (seq) WHERE claimed_ms IS NULL;
INSERT INTO ${s}.meta (key, value) VALUES ('schema_version', '${POSTGRES_SCHEMA_VERSION}') ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;
`;
}

/** The statements of the store, on the schema `s` (quoted). */
export function postgresStatements(s: string) {
  const tasksOf = (delivery: string) => `ARRAY(SELECT t.task FROM ${s}.delivery_tasks t WHERE t.delivery = ${delivery} ORDER BY t.seq) AS written`;
  return {
    /** $1 delivery, $2 task id, $3 ended, $4 JSON, $5 now: the merge rule of task-merge.ts, atomic in one statement. */
    upsertTask: `INSERT INTO ${s}.delivery_tasks AS t (delivery, task_id, terminal, task, written_ms) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (delivery, task_id) DO UPDATE SET terminal = EXCLUDED.terminal, task = EXCLUDED.task, written_ms = EXCLUDED.written_ms
WHERE NOT (t.terminal AND NOT EXCLUDED.terminal)`,
    /** The task writes of each delivery come with it, in the order first written, in the same snapshot. */
    tasksOf,
    counts: `SELECT 'verdict' AS kind, verdict AS name, count(*) AS n FROM ${s}.deliveries WHERE received_ms >= $1 GROUP BY verdict
UNION ALL SELECT 'endpoint', endpoint, count(*) FROM ${s}.deliveries WHERE received_ms >= $1 GROUP BY endpoint`,
    pruneBefore: `WITH gone AS (DELETE FROM ${s}.deliveries WHERE received_ms < $1 RETURNING id),
  tasks AS (DELETE FROM ${s}.delivery_tasks WHERE delivery IN (SELECT id FROM gone))
SELECT count(*) AS n FROM gone`,
    pruneBeyond: `WITH gone AS (DELETE FROM ${s}.deliveries WHERE id IN (SELECT id FROM ${s}.deliveries ORDER BY received_ms DESC, id DESC OFFSET $1) RETURNING id),
  tasks AS (DELETE FROM ${s}.delivery_tasks WHERE delivery IN (SELECT id FROM gone))
SELECT count(*) AS n FROM gone`,
    // Task writes whose delivery never came: by the time the deliveries of then are pruned, it will not.
    pruneOrphanTasks: `DELETE FROM ${s}.delivery_tasks t WHERE t.written_ms < $1 AND NOT EXISTS (SELECT 1 FROM ${s}.deliveries d WHERE d.id = t.delivery)`,
    pruneTickets: `DELETE FROM ${s}.replay_tickets WHERE finished_ms < $1 OR (finished_ms IS NULL AND requested_ms < $2)`,
    upsertGroup: upsertGroupSql(`${s}.delivery_groups`, (n) => `$${n}`),
    group: `SELECT sealed FROM ${s}.delivery_groups WHERE id = $1`,
    pruneGroups: pruneGroupsSql(`${s}.delivery_groups`, `${s}.deliveries`, (n) => `$${n}`),
    requestReplay: `INSERT INTO ${s}.replay_tickets (ticket, delivery, requested_ms) VALUES ($1, $2, $3)`,
    // A ticket another claim has locked is skipped, not waited for: two serves take two tickets.
    claimReplay: `UPDATE ${s}.replay_tickets SET claimed_ms = $1
WHERE ticket = (SELECT ticket FROM ${s}.replay_tickets WHERE claimed_ms IS NULL ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING ticket, delivery`,
    finishReplay: `UPDATE ${s}.replay_tickets SET finished_ms = $1, outcome = $2 WHERE ticket = $3`,
    replayOutcome: `SELECT outcome FROM ${s}.replay_tickets WHERE ticket = $1`,
  };
}
