// The SQLite store's file: its settings and tables, made on first open and left as they are
// after (every statement is IF NOT EXISTS), its version in PRAGMA user_version.

/**
 * What this code writes; a file of a higher version was made by a newer endpoint-service. 2 added
 * delivery_groups (requests sealed together): a file of version 1 gains the table when opened.
 */
export const SQLITE_SCHEMA_VERSION = 2;

/** How long a write waits for another connection's (serve's cluster workers each have one). */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

/**
 * The busy timeout comes first, so that switching to WAL waits for a connection opened at the same
 * moment. WAL lets readers (the CLI, the page) go on while a worker writes; synchronous NORMAL is
 * WAL's usual pairing: a power cut may lose the last commits of a log, never corrupt it.
 */
export const SQLITE_SETTINGS = `
PRAGMA busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS};
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
`;

/**
 * Every index is written on every request, so there are few, and they grow at their end: rows in
 * the order they are written (seq), the time index (deliveries arrive in time order), and the id,
 * which cannot. Filters by endpoint or verdict read the time index: a log of 100,000 deliveries is
 * scanned in milliseconds, and the page and the CLI ask far less often than requests arrive.
 */
export const SQLITE_TABLES = `
CREATE TABLE IF NOT EXISTS deliveries (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  received_ms INTEGER NOT NULL,
  received_at TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  method TEXT NOT NULL,
  path TEXT NOT NULL,
  client TEXT NOT NULL,
  verdict TEXT NOT NULL,
  status INTEGER NOT NULL,
  reason TEXT,
  duration_ms REAL NOT NULL,
  deduplication_key TEXT,
  replay_of TEXT,
  job TEXT,
  request TEXT NOT NULL,
  tasks TEXT NOT NULL,
  sealed TEXT
);
CREATE INDEX IF NOT EXISTS deliveries_newest ON deliveries (received_ms, id);
CREATE TABLE IF NOT EXISTS delivery_tasks (
  delivery TEXT NOT NULL,
  task_id TEXT NOT NULL,
  terminal INTEGER NOT NULL,
  task TEXT NOT NULL,
  written_ms INTEGER NOT NULL,
  PRIMARY KEY (delivery, task_id)
);
CREATE TABLE IF NOT EXISTS delivery_groups (
  id TEXT PRIMARY KEY,
  written_ms INTEGER NOT NULL,
  sealed TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS replay_tickets (
  seq INTEGER PRIMARY KEY,
  ticket TEXT NOT NULL UNIQUE,
  delivery TEXT NOT NULL,
  requested_ms INTEGER NOT NULL,
  claimed_ms INTEGER,
  finished_ms INTEGER,
  outcome TEXT
);
CREATE INDEX IF NOT EXISTS replay_tickets_waiting ON replay_tickets (seq) WHERE claimed_ms IS NULL;
`;

/** The merge rule of task-merge.ts in one statement: a stored task that has ended is not replaced by one that has not. */
export const UPSERT_TASK_SQL = `INSERT INTO delivery_tasks (delivery, task_id, terminal, task, written_ms) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (delivery, task_id) DO UPDATE SET terminal = excluded.terminal, task = excluded.task, written_ms = excluded.written_ms
WHERE NOT (delivery_tasks.terminal = 1 AND excluded.terminal = 0)`;
