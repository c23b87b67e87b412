// Two places lean on what a dependency does not promise: the wording BullMQ gives a job that
// stalled too often, and rate-limiter-flexible's unexported MemoryStorage. An upgrade that
// changes either must fail here, not silently in production.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { STALLED_TOO_OFTEN } from '../../src/queue/consumer.js';
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
