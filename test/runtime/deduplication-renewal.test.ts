// The renewal of running deduplication claims (src/runtime/deduplication.ts, keepClaimed): every
// claim held is renewed by one timer while its request runs, and nothing is renewed, and no timer
// is left, once the last one is let go.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { keepClaimed, LEASE_MS, type DeduplicationStore } from '../../src/runtime/deduplication.js';

function recordingStore(): DeduplicationStore & { renewed: string[] } {
  const renewed: string[] = [];
  const never = () => Promise.reject(new Error('not used here'));
  return {
    renewed,
    renew: (id, token, leaseMs) => {
      expect(leaseMs).toBe(LEASE_MS);
      renewed.push(`${id}:${token}`);
      return Promise.resolve();
    },
    claim: never,
    complete: never,
    release: never,
    remember: never,
    noted: () => {},
  };
}

describe('keepClaimed', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('renews each held claim on one timer until it is let go, then leaves no timer', () => {
    const store = recordingStore();
    const stopA = keepClaimed(store, 'a', 't1');
    const stopB = keepClaimed(store, 'b', 't2');
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(10_000);
    expect(store.renewed.sort()).toEqual(['a:t1', 'b:t2']);
    stopA();
    vi.advanceTimersByTime(10_000);
    expect(store.renewed.slice(2)).toEqual(['b:t2']);
    stopB();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60_000);
    expect(store.renewed).toHaveLength(3);
  });
});
