// The in-memory record of <deduplicate> keys (one process, or the primary for its workers): one
// claim per key, a claim held under its token, and keys that expire by themselves.
import { afterEach, describe, expect, it } from 'vitest';
import { DeduplicationRecords } from '../../src/server/deduplication-records.js';

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
