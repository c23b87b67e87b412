// Three places lean on what a dependency does not promise: the wording BullMQ gives a job that
// stalled too often, the job's id in the error of a completion it refused for a lost lock, and
// rate-limiter-flexible's unexported MemoryStorage. An upgrade that
// changes either must fail here, not silently in production.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCKED_JOB_ID, STALLED_TOO_OFTEN } from '../../src/queue/consumer.js';
import { MEMORY_STORAGE_MODULE } from '../../src/server/guards.js';

const require = createRequire(import.meta.url);
const bullmqScripts = path.join(path.dirname(require.resolve('bullmq/package.json')), 'dist/esm/scripts');

describe('BullMQ: the failure of a job that stalled too often', () => {
  it('is worded as the consumer recognises it, in the Redis script that fails such a job', () => {
    const script = readdirSync(bullmqScripts).find((name) => /^moveStalledJobsToWait-\d+\.js$/.test(name));
    expect(script, 'BullMQ no longer has its moveStalledJobsToWait script').toBeDefined();
    const reasons = [...readFileSync(path.join(bullmqScripts, script!), 'utf8').matchAll(/failedReason = "([^"]*)"/g)].map((m) => m[1]!);
    expect(
      reasons.some((reason) => STALLED_TOO_OFTEN.test(reason)),
      `reasons found: ${JSON.stringify(reasons)}`,
    ).toBe(true);
  });

  it('is worded the same in its PostgreSQL backend', () => {
    const sql = readFileSync(path.join(path.dirname(require.resolve('bullmq/package.json')), 'dist/esm/postgres/sql-scripts.js'), 'utf8');
    expect(STALLED_TOO_OFTEN.test(sql)).toBe(true);
  });
});

describe('BullMQ: a completion refused for a lost lock', () => {
  it('carries its code and names the job where the consumer reads its id, on every backend', () => {
    const { ErrorCode } = require('bullmq') as { ErrorCode: Record<string, number> };
    // Both backends build their errors here (its own comment says so).
    const { finishedErrors } = require(path.join(path.dirname(require.resolve('bullmq/package.json')), 'dist/cjs/classes/finished-errors.js')) as {
      finishedErrors(args: { code: number; jobId: string; command: string; state?: string }): Error & { code?: number };
    };
    for (const code of [ErrorCode.JobLockNotExist!, ErrorCode.JobLockMismatch!, ErrorCode.JobNotInState!]) {
      // The consumer's job ids hold a dot: the request id, then the task run's.
      const error = finishedErrors({ code, jobId: '3f2a-9.b1c2', command: 'moveToFinished', state: 'active' });
      expect(error.code).toBe(code);
      const found = LOCKED_JOB_ID.exec(error.message);
      expect(found?.[1] ?? found?.[2] ?? found?.[3], error.message).toBe('3f2a-9.b1c2');
    }
    for (const backend of ['classes/redis-queue-backend.js', 'postgres/postgres-queue-backend.js'])
      expect(readFileSync(path.join(path.dirname(require.resolve('bullmq/package.json')), 'dist/cjs', backend), 'utf8')).toContain('finishedErrors');
  });
});

describe("rate-limiter-flexible's MemoryStorage", () => {
  interface Res {
    consumedPoints: number;
    remainingPoints: number;
    msBeforeNext: number;
  }
  const MemoryStorage = require(MEMORY_STORAGE_MODULE) as new () => { incrby(key: string, value: number, durationSec: number): Res };

  it('is where the guards load it from, and counts a fixed window per key synchronously', () => {
    const storage = new MemoryStorage();
    const first = storage.incrby('k', 1, 60);
    const second = storage.incrby('k', 1, 60);
    const other = storage.incrby('other', 1, 60);
    expect(first).not.toBeInstanceOf(Promise);
    expect([first.consumedPoints, second.consumedPoints, other.consumedPoints]).toEqual([1, 2, 1]);
    expect(second.msBeforeNext).toBeGreaterThan(0);
    expect(second.msBeforeNext).toBeLessThanOrEqual(60_000);
  });
});
