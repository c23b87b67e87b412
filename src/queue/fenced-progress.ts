// A job's progress record (its checkpoint, job.ts) written only while this worker still holds the
// job's lock, in one step in the store. Asking first and writing after left a gap: a worker held
// up between the two (a paused event loop, a stopped process) wrote its stale record over the one
// of the worker that had taken the job over meanwhile, and `jobs show` lost the tasks that worker
// ran. BullMQ's own updateProgress writes unconditionally; this is its write with the fence.
//
// The layout is BullMQ's (the job's hash and its lock key on Redis, the job row on PostgreSQL):
// bullmq is pinned, and test/queue/fenced-progress.e2e.test.ts holds this against it.

/** BullMQ's key prefix (no `prefix` option is given to its queues and workers). */
const BULL_PREFIX = 'bull';

/** Redis: the job's hash and its lock key, in BullMQ's layout. */
export function jobKeys(queueName: string, jobId: string): [jobKey: string, lockKey: string] {
  const jobKey = `${BULL_PREFIX}:${queueName}:${jobId}`;
  return [jobKey, `${jobKey}:lock`];
}

/** KEYS[1] the job's hash, KEYS[2] its lock; ARGV[1] the worker's token, ARGV[2] the progress as JSON. 1: written, 0: the lock is not this token's. */
export const FENCED_PROGRESS_SCRIPT = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'progress', ARGV[2])
return 1
`;

/** BullMQ's schema on PostgreSQL (no `schema` option is given to its connections). */
const BULL_SCHEMA = 'bullmq';

/** $1 queue, $2 job id, $3 the worker's token, $4 the progress as JSON: one row back when written. As BullMQ's extend_lock, an active job whose token is this worker's. */
export const POSTGRES_FENCED_PROGRESS = `UPDATE ${BULL_SCHEMA}.job SET progress = $4::jsonb
WHERE queue = $1 AND id = $2 AND state = 'active' AND lock_token = $3
RETURNING 1 AS written`;
