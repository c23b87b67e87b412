// The Redis store's index of deliveries: one sorted set, scored by receivedAt in epoch ms. For
// equal scores Redis orders members by their bytes, so reading it from the top is the log's
// newest-first order, ties by id, descending.

import type { Redis } from 'ioredis';

export interface IndexEntry {
  readonly id: string;
  readonly ms: number;
}

/**
 * The entries scored from `max` down to `min` (both included), `page` at a time. Each page starts
 * at the lowest score seen so far, past the entries of that score already given: a page may end
 * inside a run of equal scores longer than a page.
 */
export async function* newestFirst(redis: Redis, key: string, max: number | '+inf', min: number | '-inf', page: number): AsyncGenerator<IndexEntry[]> {
  let top: number | '+inf' = max;
  let skip = 0;
  for (;;) {
    const flat = await redis.zrevrangebyscore(key, top, min, 'WITHSCORES', 'LIMIT', skip, page);
    const entries: IndexEntry[] = [];
    for (let i = 0; i < flat.length; i += 2) entries.push({ id: flat[i]!, ms: Number(flat[i + 1]) });
    if (entries.length === 0) return;
    yield entries;
    if (entries.length < page) return;
    const lowest = entries.at(-1)!.ms;
    const atLowest = entries.filter((e) => e.ms === lowest).length;
    if (lowest === top) skip += atLowest;
    else [top, skip] = [lowest, atLowest];
  }
}
