// A job's fate (src/queue/fate.ts) on a real store: settled once, by whichever of void and
// started comes first, and every settle, however many race, learns the same fate.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Redis } from 'ioredis';
import { openStore, type Store } from '../../src/queue/store.js';
import { POSTGRES_FATE_TABLE } from '../../src/queue/fate.js';
import { queueBackends, runsOn, stopSpawnedRedis, storeSettings, uniqueQueueName } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);

describe.each(backends)('job fates on %s', (backend) => {
  if (!runsOn(backend)) return;
  const name = uniqueQueueName('fate');
  const settings = storeSettings(backend, name);
  let store: Store;
  const id = () => `${randomBytes(6).toString('hex')}.00000000`;

  afterAll(async () => {
    await store?.close();
    if (backend.name === 'redis') {
      const redis = new Redis(backend.url);
      const keys = await redis.keys(`bull:${name}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    } else {
      const db = new pg.Pool({ connectionString: backend.url, max: 1 });
      await db.query(`DELETE FROM ${POSTGRES_FATE_TABLE} WHERE queue = $1`, [name]).catch(() => {});
      await db.end();
    }
  });

  it('keeps the first fate: a void job stays void, a started one started', async () => {
    store = await openStore(settings, 'producer', () => {});
    const voided = id();
    expect(await store.settleFate(voided, 'void')).toBe('void');
    expect(await store.settleFate(voided, 'started')).toBe('void');
    const started = id();
    expect(await store.settleFate(started, 'started')).toBe('started');
    expect(await store.settleFate(started, 'void')).toBe('started');
    // A later attempt of a started job settles it started again.
    expect(await store.settleFate(started, 'started')).toBe('started');
  });

  it('gives every one of many racing settles the same fate', async () => {
    for (let round = 0; round < 5; round++) {
      const job = id();
      const fates = await Promise.all(Array.from({ length: 20 }, (_, i) => store.settleFate(job, i % 2 === 0 ? 'void' : 'started')));
      expect(new Set(fates).size).toBe(1);
    }
  });
  it('forgets fates older than a day: PostgreSQL when asked (the consumers sweep hourly), Redis by expiry', async () => {
    const old = id();
    const recent = id();
    await store.settleFate(old, 'void');
    await store.settleFate(recent, 'void');
    if (backend.name === 'redis') {
      const redis = new Redis(backend.url);
      try {
        const ttl = await redis.pttl(`bull:${name}:${old}:fate`);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(24 * 3600_000);
      } finally {
        redis.disconnect();
      }
      return;
    }
    const db = new pg.Pool({ connectionString: backend.url, max: 1 });
    try {
      await db.query(`UPDATE ${POSTGRES_FATE_TABLE} SET settled_at = now() - interval '25 hours' WHERE queue = $1 AND job_id = $2`, [name, old]);
    } finally {
      await db.end();
    }
    await store.forgetFates();
    expect(await store.settleFate(old, 'started')).toBe('started');
    expect(await store.settleFate(recent, 'started')).toBe('void');
  });
});
