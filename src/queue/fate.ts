// A job's fate: settled once, by whichever comes first of the producer giving up on it (void) and
// a consumer starting it (started). serve answers a background request only after the store has
// acknowledged its job, within a bound; when the bound passes, the job may still be stored, later,
// by a store that was only stalled (an fsync, a fork), and a worker would run it although the
// request was answered 503 (or run in-process). So the producer, giving up, settles the job void,
// and every consumer settles it started before it runs a task: one atomic write per job in the
// store, where exactly one of the two wins and both learn which.
//
// The marker is a key of its own beside the job (Redis: one string with a day's expiry;
// PostgreSQL: one row of endpoint_service_job_fate), so it holds whether it lands before or after
// the job itself: a late job whose fate is void is completed without running anything.

/** The fate a job's marker holds after a settle: the one asked for, or the one that was there first. */
export type JobFate = 'void' | 'started';

/** How long a fate is kept: far beyond any stall the store could hold a job back for. */
export const FATE_RETENTION_MS = 24 * 60 * 60_000;

/** Redis: the key of a job's fate, beside BullMQ's keys of the job (job ids hold no ':'). */
export function fateKey(queueName: string, jobId: string): string {
  return `bull:${queueName}:${jobId}:fate`;
}

/** KEYS[1] the fate key; ARGV[1] the fate asked for, ARGV[2] its expiry in ms. Returns the fate that holds. */
export const SETTLE_FATE_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current then return current end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]
`;

export const POSTGRES_FATE_TABLE = 'endpoint_service_job_fate';

export const POSTGRES_CREATE_FATE_TABLE = `CREATE TABLE IF NOT EXISTS ${POSTGRES_FATE_TABLE} (
  queue text NOT NULL,
  job_id text NOT NULL,
  fate text NOT NULL,
  settled_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (queue, job_id)
)`;

/**
 * $1 queue, $2 job id, $3 the fate asked for. The conflicting row is locked and left as it is, so
 * two settles of one job are serialised and the second returns the first one's fate.
 */
export const POSTGRES_SETTLE_FATE = `INSERT INTO ${POSTGRES_FATE_TABLE} (queue, job_id, fate) VALUES ($1, $2, $3)
ON CONFLICT (queue, job_id) DO UPDATE SET fate = ${POSTGRES_FATE_TABLE}.fate
RETURNING fate`;

/** $1 queue, $2 age in ms: fates older than that are forgotten (Redis lets them expire). */
export const POSTGRES_FORGET_FATES = `DELETE FROM ${POSTGRES_FATE_TABLE} WHERE queue = $1 AND settled_at < now() - ($2::bigint * interval '1 millisecond')`;

export function parseFate(value: unknown): JobFate {
  if (value === 'void' || value === 'started') return value;
  throw new Error(`the store holds an unknown fate for the job: ${JSON.stringify(value)}`);
}
