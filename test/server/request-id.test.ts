import { describe, expect, it } from 'vitest';
import { newRequestId } from '../../src/server/request-id.js';

describe('request ids', () => {
  it('are version 7 UUIDs carrying the time of arrival', () => {
    const at = Date.UTC(2026, 10, 27, 20, 30, 0, 123);
    const id = newRequestId(at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
  });

  it('sort in the order of their times, and differ within one millisecond', () => {
    const times = [1, 255, 256, 65_535, 1_700_000_000_000, 1_800_000_000_000, 2 ** 48 - 1];
    const ids = times.map((t) => newRequestId(t));
    expect([...ids].sort()).toEqual(ids);
    const same = new Set(Array.from({ length: 1000 }, () => newRequestId(1_800_000_000_000)));
    expect(same.size).toBe(1000);
  });
});
