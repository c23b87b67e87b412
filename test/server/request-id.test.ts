// Request ids share one counter per process: each test uses times later than the one before it.
import { describe, expect, it } from 'vitest';
import { newRequestId } from '../../src/server/request-id.js';

const timeOf = (id: string) => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe('request ids', () => {
  it('are version 7 UUIDs carrying the time of arrival', () => {
    const at = Date.UTC(2026, 10, 27, 20, 30, 0, 123);
    const id = newRequestId(at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(timeOf(id)).toBe(at);
  });

  it('sort in the order of their times', () => {
    const times = [1_800_000_000_000, 1_800_000_000_001, 1_800_000_000_255, 1_800_000_065_535, 1_900_000_000_000];
    const ids = times.map((t) => newRequestId(t));
    expect([...ids].sort()).toEqual(ids);
    expect(ids.map(timeOf)).toEqual(times);
  });

  it('sort in the order they were made within one millisecond, past the end of the counter', () => {
    const at = 2_000_000_000_000;
    const ids = Array.from({ length: 5000 }, () => newRequestId(at));
    expect(new Set(ids).size).toBe(5000);
    expect([...ids].sort()).toEqual(ids);
    // 4,096 counter values at most per millisecond: the rest carry on in the next ones.
    expect(timeOf(ids[0]!)).toBe(at);
    expect(timeOf(ids.at(-1)!)).toBeGreaterThan(at);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('never go back when the clock does', () => {
    const later = newRequestId(2_100_000_000_000);
    const earlier = newRequestId(2_099_999_999_000);
    expect(earlier > later).toBe(true);
    expect(timeOf(earlier)).toBe(2_100_000_000_000);
  });
});
