// What a Redis deduplication store keeps per endpoint is bounded as the memory store is
// (deduplication-records.ts): beyond the count or the bytes the oldest remembered answers of the
// endpoint are evicted, counted in endpoint_service_deduplication_evictions_total; another
// endpoint's are not touched. With a real Redis; small limits so the test stays short.
import { afterAll, describe, expect, it } from 'vitest';
import { ServiceDeduplication } from '../../src/server/deduplication/service.js';
import { ServiceMetrics } from '../../src/server/metrics.js';
import type { Application } from '../../src/compiler/ast.js';
import { deleteKeys, keysUnder, testRedisUrl, uniqueKeyPrefix } from '../helpers/redis.js';

const prefixes: string[] = [];
let url: string | null = null;
afterAll(async () => {
  if (url !== null) await deleteKeys(url, prefixes);
});

const quiet = { log: () => {}, request: () => {} };
const DEDUPLICATING = { endpoints: [{ deduplicate: {} }] } as unknown as Application;
const answer = (body: string) => ({ status: 200, location: null, contentType: 'text/plain', body });

async function evictions(metrics: ServiceMetrics): Promise<number> {
  const text = await metrics.registry.metrics();
  return Number(/^endpoint_service_deduplication_evictions_total (\d+)$/m.exec(text)?.[1] ?? NaN);
}

describe('the Redis store bounds what it remembers per endpoint', () => {
  it('evicts the oldest answers of the endpoint beyond the count and the bytes, and counts them', async (context) => {
    url = await testRedisUrl();
    if (url === null) return context.skip();
    const prefix = uniqueKeyPrefix('dedup-bound');
    prefixes.push(prefix);
    const metrics = new ServiceMetrics();
    const store = new ServiceDeduplication({ store: url, prefix, limits: { count: 3, bytes: 4000 } }, quiet, metrics);
    await store.open(DEDUPLICATING);
    try {
      for (const id of ['a1', 'a2', 'a3', 'a4']) expect((await store.remember(id, 'fp', answer('x'), 3_600_000, 'a')).kind).toBe('claimed');
      await store.remember('b1', 'fp', answer('x'), 3_600_000, 'b');
      expect(await evictions(metrics)).toBe(1);
      expect((await store.claim('a1', 'fp', 30_000)).kind).toBe('claimed');
      expect((await store.claim('a2', 'fp', 30_000)).kind).toBe('done');
      expect((await store.claim('b1', 'fp', 30_000)).kind).toBe('done');

      // Through complete, and by bytes: two answers of 1,500 characters leave room for one more small one only.
      for (const id of ['c1', 'c2']) {
        const claim = await store.claim(id, 'fp', 30_000);
        await store.complete(id, (claim as { token: string }).token, 'fp', answer('y'.repeat(1500)), 3_600_000, 'c');
      }
      await store.remember('c3', 'fp', answer('y'.repeat(1500)), 3_600_000, 'c');
      expect(await evictions(metrics)).toBe(2);
      expect((await store.claim('c1', 'fp', 30_000)).kind).toBe('claimed');
      expect((await store.claim('c3', 'fp', 30_000)).kind).toBe('done');
      // Every remembered key and the two bookkeeping keys per endpoint, nothing else: no key grows without bound.
      const keys = await keysUnder(url, prefix);
      expect(keys.filter((k) => k.includes('dedup-remembered:')).sort()).toEqual(
        ['a', 'b', 'c'].flatMap((e) => [`${prefix}dedup-remembered:${e}:order`, `${prefix}dedup-remembered:${e}:sizes`]),
      );
    } finally {
      store.close();
    }
  });
});
