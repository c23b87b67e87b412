// src/units.ts: the one reader of durations and sizes, for endpoints.xml and the command line.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TASK_TIMEOUT_MS,
  MAX_AGE_MS,
  MAX_TIMER_MS,
  ageExpectation,
  durationExpectation,
  formatAge,
  formatDuration,
  formatSize,
  parseAge,
  parseDuration,
  parseSize,
} from '../src/units.js';

describe('parseDuration', () => {
  it('reads a number with a unit', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('10s')).toBe(10_000);
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('1h')).toBe(3_600_000);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration(' 30s ')).toBe(30_000);
  });

  it('refuses a bare number, zero, a negative, a missing number and an unknown unit', () => {
    for (const bad of ['10', '60000', '0s', '0.0001s', '-1s', 's', '10 parsecs', '1d', '']) expect(parseDuration(bad), bad).toBeNull();
  });

  it('refuses what a Node.js timer cannot wait for (more than 2^31-1 ms)', () => {
    expect(MAX_TIMER_MS).toBe(2 ** 31 - 1);
    expect(parseDuration(`${MAX_TIMER_MS}ms`)).toBe(MAX_TIMER_MS);
    expect(parseDuration(`${MAX_TIMER_MS + 1}ms`)).toBeNull();
    expect(parseDuration('596h')).toBe(596 * 3_600_000);
    for (const bad of ['597h', '1000h', '99999999999999999999999s']) expect(parseDuration(bad), bad).toBeNull();
  });

  it('says why a duration was refused', () => {
    expect(durationExpectation('60000')).toContain('write 60000ms or 60000s');
    expect(durationExpectation('1000h')).toContain('at most 596h');
    expect(durationExpectation('0s')).toContain('positive duration');
    expect(durationExpectation('soon')).toContain('positive duration');
  });
});

describe('parseAge', () => {
  it('reads days too, and ages longer than any timer', () => {
    expect(parseAge('14d')).toBe(14 * 86_400_000);
    expect(parseAge('36h')).toBe(36 * 3_600_000);
    expect(parseAge('1s')).toBe(1000);
    expect(parseAge('90d')).toBe(90 * 86_400_000);
    expect(parseAge('3650d')).toBe(MAX_AGE_MS);
  });

  it('keeps whole seconds, rounding a fraction up', () => {
    expect(parseAge('1.5s')).toBe(2000);
    expect(parseAge('0.5m')).toBe(30_000);
  });

  it('refuses a bare number, less than a second, more than 3650d and unknown units', () => {
    for (const bad of ['14', '500ms', '0s', '0d', '3651d', '-1d', '2w', 'forever', '']) expect(parseAge(bad), bad).toBeNull();
  });

  it('says why an age was refused', () => {
    expect(ageExpectation('14')).toContain('write 14d or 14h');
    expect(ageExpectation('500ms')).toContain('at least 1s');
    expect(ageExpectation('5000d')).toContain('at most 3650d');
    expect(ageExpectation('2w')).toContain('positive duration');
  });

  it('writes ages that parseAge reads back', () => {
    for (const text of ['14d', '36h', '90m', '45s']) expect(formatAge(parseAge(text)!)).toBe(text);
  });
});

describe('parseSize', () => {
  it('reads bytes, bare or with a unit, with or without a space', () => {
    expect(parseSize('1024')).toBe(1024);
    expect(parseSize('10MiB')).toBe(10 * 1024 * 1024);
    expect(parseSize('10 MiB')).toBe(10 * 1024 * 1024);
    expect(parseSize('512k')).toBe(512 * 1024);
    expect(parseSize('1mb')).toBe(1_000_000);
  });

  it('refuses zero, negatives, fractions and words', () => {
    for (const bad of ['0', '-5', '1.5M', 'lots']) expect(parseSize(bad), bad).toBeNull();
  });

  it('takes k, M, G and KiB, MiB, GiB as binary, kB, MB, GB as decimal, in any case (docs/serve.md, "Durations and sizes")', () => {
    const binary = { k: 1024, KiB: 1024, M: 1024 ** 2, MiB: 1024 ** 2, G: 1024 ** 3, GiB: 1024 ** 3 };
    const decimal = { kB: 1000, MB: 1000 ** 2, GB: 1000 ** 3 };
    for (const [unit, bytes] of Object.entries({ ...binary, ...decimal })) {
      expect(parseSize(`1${unit}`), unit).toBe(bytes);
      expect(parseSize(`1${unit.toLowerCase()}`), unit.toLowerCase()).toBe(bytes);
    }
    const readme = readFileSync(new URL('../docs/serve.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    expect(readme).toContain('`k`, `M`, `G` and `KiB`, `MiB`, `GiB` are binary (1024), `kB`, `MB`, `GB` decimal (1000)');
  });
});

describe('formatting', () => {
  it('writes durations in the largest unit that divides them', () => {
    expect(formatDuration(60_000)).toBe('1m');
    expect(formatDuration(30_000)).toBe('30s');
    expect(formatDuration(300)).toBe('300ms');
    expect(formatDuration(DEFAULT_TASK_TIMEOUT_MS)).toBe('30s');
  });

  it('writes sizes in binary units that parseSize reads back', () => {
    for (const bytes of [10 * 1024 * 1024, 512 * 1024, 1000, 3 * 1024 ** 3]) expect(parseSize(formatSize(bytes))).toBe(bytes);
    expect(formatSize(10 * 1024 * 1024)).toBe('10 MiB');
    expect(formatSize(1000)).toBe('1000 B');
  });
});
