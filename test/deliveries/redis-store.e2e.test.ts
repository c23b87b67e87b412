// The Redis delivery store on the Redis every suite uses (helpers/redis.ts): the contract every
// store keeps, each store under a key prefix of its own, removed afterwards (the Redis may be
// shared with other runs).
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { openRedisStore } from '../../src/deliveries/redis-store.js';
import { deleteKeys, freePort, keysUnder, stopSpawnedRedis, testRedisUrl, uniqueKeyPrefix } from '../helpers/redis.js';
import { delivery, deliveryStoreContract, record, T0, task, taskWrite } from './store-contract.js';

const REDIS_URL = await testRedisUrl();
const prefixes: string[] = [];
const newPrefix = () => {
  const prefix = uniqueKeyPrefix('deliveries');
  prefixes.push(prefix);
  return prefix;
};

afterAll(async () => {
  if (REDIS_URL !== null) await deleteKeys(REDIS_URL, prefixes);
  await stopSpawnedRedis();
});

describe.skipIf(REDIS_URL === null)('the Redis delivery store', () => {
  const url = REDIS_URL!;

  deliveryStoreContract(async () => {
    const prefix = newPrefix();
    return { open: () => openRedisStore(url, prefix) };
  });

  it('keeps every key under its prefix, and prune leaves none of a delivery behind', async () => {
    const prefix = newPrefix();
    const store = await openRedisStore(url, prefix);
    expect(store.description).toBe(`Redis at ${url}`);
    try {
      await store.write([delivery(record('req-1', T0, { tasks: [task('a', 'pending')] }), 'c2VhbGVk'), taskWrite('req-1', task('a', 'succeeded'))]);
      const ticket = await store.requestReplay('req-1');
      await store.claimReplay();
      await store.finishReplay(ticket, { ok: true, delivery: 'req-2' });
      expect((await keysUnder(url, prefix)).sort()).toEqual(['delivery:req-1', 'index', `replay:outcome:${ticket}`, 'tasks:req-1'].map((k) => `${prefix}${k}`));
      expect(await store.prune(T0 + 1, Number.MAX_SAFE_INTEGER)).toBe(1);
      expect(await keysUnder(url, prefix)).toEqual([`${prefix}replay:outcome:${ticket}`]);
    } finally {
      await store.close();
    }
  });

  it('lets the task writes of a delivery that never lands expire, and keeps them once it lands', async () => {
    const prefix = newPrefix();
    const store = await openRedisStore(url, prefix);
    const redis = new Redis(url);
    try {
      await store.write([taskWrite('req-1', task('a', 'running'))]);
      expect(await redis.pttl(`${prefix}tasks:req-1`)).toBeGreaterThan(23 * 60 * 60_000);
      await store.write([delivery(record('req-1', T0))]);
      expect(await redis.pttl(`${prefix}tasks:req-1`)).toBe(-1);
      await store.write([taskWrite('req-1', task('a', 'succeeded'))]);
      expect(await redis.pttl(`${prefix}tasks:req-1`)).toBe(-1);
    } finally {
      redis.disconnect();
      await store.close();
    }
  });

  it('stops a filtered listing after 10,000 entries of the index, matching or not', async () => {
    const store = await openRedisStore(url, newPrefix());
    try {
      const batches = Array.from({ length: 21 }, (_, b) =>
        Array.from({ length: 500 }, (_, i) => record(`req-${b}-${i}`, T0 + b * 500 + i, { endpoint: b === 0 && i < 5 ? 'rare' : 'common' })),
      );
      for (const batch of batches) await store.write(batch.map((r) => delivery(r)));
      // The 5 that match are the oldest, past the bound; from a cursor nearer them they are found.
      expect(await store.list({ limit: 10, endpoint: 'rare' })).toEqual([]);
      const near = batches[5]![0]!;
      expect(await store.list({ limit: 10, endpoint: 'rare', after: { receivedAt: near.receivedAt, id: near.id } })).toHaveLength(5);
    } finally {
      await store.close();
    }
  });

  it('refuses to open when Redis cannot be reached, naming it by its URL without the password', async () => {
    const port = await freePort();
    await expect(openRedisStore(`redis://:secret@127.0.0.1:${port}`, newPrefix())).rejects.toThrow(
      new RegExp(`^Redis at redis://127\\.0\\.0\\.1:${port} cannot be reached: .*ECONNREFUSED`),
    );
  });
});
