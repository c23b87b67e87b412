// src/units.ts: the one reader of durations and sizes, for endpoints.xml and the command line.
import { describe, expect, it } from 'vitest';
import { DEFAULT_TASK_TIMEOUT_MS, MAX_TIMER_MS, durationExpectation, formatDuration, formatSize, parseDuration, parseSize } from '../src/units.js';

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
