// A job's fate: void when its producer gave up on it (serve answered the request without it),
// or started when a consumer took it first. serve answers a background request only after the
// store has acknowledged its job, within a bound; when the bound passes, the job may still be
// stored, later, by a store that was only stalled (an fsync, a fork), and a worker would run it
// although the request was answered 503 (or run in-process). So the producer, giving up, makes
// the job void in one atomic step in the store, against BullMQ's own fetch of the job:
//
// - a job not stored yet gets a void record in its place (Redis: the job's hash holding only the
//   void progress, with a day's expiry; PostgreSQL: a completed row holding it), so the add that
//   lands later finds its id taken and stores nothing (BullMQ's duplicate id);
// - a job stored but never fetched by a worker (no lock, never processed) gets the void progress:
//   the worker that fetches it later reads it with the job, in the same round trip, and
//   completes it without running anything;
// - a job a worker has fetched (locked, or processed before) was started: the void fails, and the
//   request was queued after all;
// - a job already void stays void (its worker, if any, found it so).
//
// So a worker writes nothing before it runs a job: the fate costs the drain no round trip. The
// layout is BullMQ's (the job's hash, its lock key and its `processedOn` field on Redis; the job
// row on PostgreSQL): bullmq is pinned, and test/queue/fate.e2e.test.ts holds this against it.

import type { RunProgress } from './job.js';

/** What a void leaves: the job is void, or a consumer had already started it. */
export type JobFate = 'void' | 'started';

/** How long the void record of a job not stored yet is kept: far beyond any stall the store could hold the add back for. */
export const FATE_RETENTION_MS = 24 * 60 * 60_000;

/** The progress a void job holds: an empty record marked void (job.ts, readProgress keeps the mark). */
export const VOID_PROGRESS: RunProgress = { tasks: {}, mail: {}, void: true };

/** What the void record of a job not stored yet says of it (`jobs` reads it as a job's data): its endpoint and request, nothing of the request's values. */
export function voidRecordData(endpoint: string, requestId: string, at: number): string {
  return JSON.stringify({ v: 1, endpoint, requestId, enqueuedAt: at });
}

/** ARGV of VOID_JOB_SCRIPT. */
export function redisVoidArguments(endpoint: string, requestId: string): [progress: string, ms: number, name: string, data: string, now: number] {
  const now = Date.now();
  return [JSON.stringify(VOID_PROGRESS), FATE_RETENTION_MS, endpoint, voidRecordData(endpoint, requestId, now), now];
}

/**
 * KEYS[1] the job's hash, KEYS[2] its lock; ARGV[1] the void progress as JSON, ARGV[2] the
 * expiry in ms of the hash written in place of a job not stored yet, ARGV[3] its name (the
 * endpoint), ARGV[4] its data (voidRecordData), ARGV[5] now in ms. Returns the fate that holds.
 */
export const VOID_JOB_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'progress', ARGV[1], 'name', ARGV[3], 'data', ARGV[4], 'timestamp', ARGV[5])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 'void'
end
if redis.call('HGET', KEYS[1], 'progress') == ARGV[1] then return 'void' end
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('HEXISTS', KEYS[1], 'processedOn') == 1 then return 'started' end
redis.call('HSET', KEYS[1], 'progress', ARGV[1])
return 'void'
`;

/** BullMQ's schema on PostgreSQL (no `schema` option is given to its connections). */
const BULL_SCHEMA = 'bullmq';

/**
 * $1 queue, $2 job id, $3 the endpoint (the row's name), $4 the void progress as JSON, $5 now in
 * ms, $6 the row's data (voidRecordData). One statement: a void row where there is no job yet (BullMQ's add then inserts nothing: ON
 * CONFLICT DO NOTHING), else the void progress on a job no worker has fetched (a worker's claim
 * locks the row, and this update waits for it, then finds it active). A row, 'void'; none,
 * started. A job the add stores concurrently, after this statement's snapshot, is neither
 * inserted over nor seen by the update: no row, so it is reported started, and it runs, as the
 * answer then says.
 */
export const POSTGRES_VOID_JOB = `WITH stored AS (
  INSERT INTO ${BULL_SCHEMA}.job (queue, id, seq, name, state, data, progress, added_at_ms, finished_at_ms)
  VALUES ($1, $2, nextval('${BULL_SCHEMA}.job_seq'), $3, 'completed', $6::jsonb, $4::jsonb, $5, $5)
  ON CONFLICT (queue, id) DO NOTHING
  RETURNING 1
), marked AS (
  UPDATE ${BULL_SCHEMA}.job SET progress = $4::jsonb
  WHERE queue = $1 AND id = $2 AND NOT EXISTS (SELECT 1 FROM stored)
    AND (progress @> '{"void": true}' OR (state IN ('waiting', 'delayed') AND processed_at_ms IS NULL AND lock_token IS NULL))
  RETURNING 1
)
SELECT 'void' AS fate FROM stored UNION ALL SELECT 'void' AS fate FROM marked`;
