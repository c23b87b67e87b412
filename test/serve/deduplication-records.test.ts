// The in-memory record of <deduplicate> keys (one process, or the primary for its workers): one
// claim per key, a claim held under its token, and keys that expire by themselves.
import { afterEach, describe, expect, it } from 'vitest';
import { DeduplicationRecords, MAX_REMEMBERED, MAX_REMEMBERED_BYTES, rememberedSize } from '../../src/server/deduplication/records.js';

let now = 1_000_000;
const records = new DeduplicationRecords(() => now);
afterEach(() => (now += 10_000_000));
const answer = { status: 201, location: null, contentType: 'text/plain', body: 'made' };

describe('DeduplicationRecords', () => {
  it('claims a key once; the others see it running, then its remembered answer', () => {
    const first = records.claim('a', 'fp', 30_000);
    expect(first.kind).toBe('claimed');
    expect(records.claim('a', 'fp', 30_000)).toEqual({ kind: 'running', fingerprint: 'fp' });
    records.complete('a', (first as { token: string }).token, 'fp', answer, 60_000);
    expect(records.claim('a', 'other', 30_000)).toEqual({ kind: 'done', fingerprint: 'fp', answer });
  });

  it('a claim lapses after its lease unless renewed; a success after its window', () => {
    const first = records.claim('b', 'fp', 30_000) as { kind: 'claimed'; token: string };
    now += 20_000;
    records.renew('b', first.token, 30_000);
    now += 20_000;
    expect(records.claim('b', 'fp', 30_000).kind).toBe('running');
    now += 30_001;
    const second = records.claim('b', 'fp', 30_000) as { kind: 'claimed'; token: string };
    expect(second.kind).toBe('claimed');
    // The lapsed first claim can no longer complete or release the key.
    records.complete('b', first.token, 'fp', answer, 60_000);
    records.release('b', first.token);
    expect(records.claim('b', 'fp', 30_000).kind).toBe('running');
    records.complete('b', second.token, 'fp', answer, 60_000);
    now += 59_999;
    expect(records.claim('b', 'fp', 30_000).kind).toBe('done');
    now += 2;
    expect(records.claim('b', 'fp', 30_000).kind).toBe('claimed');
  });

  it('a release forgets the key, so the next request runs', () => {
    const first = records.claim('c', 'fp', 30_000) as { kind: 'claimed'; token: string };
    records.release('c', first.token);
    expect(records.claim('c', 'fp', 30_000).kind).toBe('claimed');
  });

  it('remembers an answer as the key is claimed, once', () => {
    expect(records.remember('d', 'fp', answer, 60_000).kind).toBe('claimed');
    expect(records.remember('d', 'other', answer, 60_000)).toEqual({ kind: 'done', fingerprint: 'fp', answer });
    const running = records.claim('e', 'fp', 30_000);
    expect(running.kind).toBe('claimed');
    expect(records.remember('e', 'fp', answer, 60_000)).toEqual({ kind: 'running', fingerprint: 'fp' });
  });
});

describe('the bound on remembered answers', () => {
  const remember = (store: DeduplicationRecords, id: string, body = 'x') =>
    store.remember(id, 'fp', { status: 200, location: null, contentType: null, body }, 86_400_000);

  it('evicts the oldest remembered answers beyond the count, counts them, and keeps running claims', () => {
    let evicted = 0;
    const store = new DeduplicationRecords(
      () => now,
      (count) => (evicted += count),
      { count: 3, bytes: 1 << 30 },
    );
    const running = store.claim('running', 'fp', 30_000);
    for (const id of ['k1', 'k2', 'k3', 'k4', 'k5']) remember(store, id);
    expect(evicted).toBe(2);
    expect(store.size.count).toBe(3);
    expect(store.claim('k1', 'fp', 30_000).kind).toBe('claimed');
    expect(store.claim('k3', 'fp', 30_000).kind).toBe('done');
    expect(store.claim('running', 'fp', 30_000)).toEqual({ kind: 'running', fingerprint: 'fp' });
    expect(running.kind).toBe('claimed');
    store.close();
  });

  it('evicts the oldest beyond the bytes: 1,500 keys with 60 KB answers hold no more than the bound', () => {
    let evicted = 0;
    const bound = 10 * 1024 * 1024;
    const store = new DeduplicationRecords(
      () => now,
      (count) => (evicted += count),
      { count: 10_000, bytes: bound },
    );
    const body = 'b'.repeat(60_000);
    for (let i = 0; i < 1500; i++) remember(store, `key-${i}`, body);
    expect(store.size.bytes).toBeLessThanOrEqual(bound);
    expect(store.size.count).toBe(Math.floor(bound / rememberedSize({ status: 200, location: null, contentType: null, body })));
    expect(evicted).toBe(1500 - store.size.count);
    expect(store.claim('key-0', 'fp', 30_000).kind).toBe('claimed');
    expect(store.claim('key-1499', 'fp', 30_000).kind).toBe('done');
    store.close();
  });

  it('counts an answer once when a key is remembered again, and forgets its bytes when it expires or is released', () => {
    const store = new DeduplicationRecords(
      () => now,
      () => {},
      { count: 10, bytes: 1 << 30 },
    );
    const claim = store.claim('a', 'fp', 30_000);
    store.complete('a', (claim as { token: string }).token, 'fp', { status: 200, location: null, contentType: null, body: 'abc' }, 60_000);
    store.complete('a', (claim as { token: string }).token, 'fp', { status: 200, location: null, contentType: null, body: 'abc' }, 60_000);
    expect(store.size.count).toBe(1);
    now += 120_000;
    expect(store.claim('a', 'fp', 30_000).kind).toBe('claimed');
    expect(store.size).toEqual({ count: 0, bytes: 0 });
    store.close();
  });

  it('is 10,000 answers and 64 MiB by default', () => {
    expect([MAX_REMEMBERED, MAX_REMEMBERED_BYTES]).toEqual([10_000, 64 * 1024 * 1024]);
  });
});
