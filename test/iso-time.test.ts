import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTime } from '../src/iso-time.js';

describe('isoTime', () => {
  it('writes what Date#toISOString writes, whatever order the times come in', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 253402300799999 }), { minLength: 1, maxLength: 20 }), (times) => {
        for (const ms of times) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      }),
    );
    for (const ms of [0, 9, 10, 99, 100, 999, 1000, 1_764_288_000_001]) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });
});
