// The pure parts of serve: query and form decoding, option values, hash comparison.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Endpoint } from '../../src/compiler/ast.js';
import { hashMatches } from '../../src/runtime/hash.js';
import { parseUrlEncoded } from '../../src/runtime/urlencoded.js';
import { formatDuration, originOf, parseDuration, parseSize } from '../../src/server/options.js';

const decode = (text: string) => {
  const into = new Map<string, string[]>();
  const problem = parseUrlEncoded(text, into, 'query string');
  return problem ?? Object.fromEntries(into);
};

describe('parseUrlEncoded', () => {
  it('collects repeated names in order and keeps empty values', () => {
    expect(decode('a=1&b=&a=2&c')).toEqual({ a: ['1', '2'], b: [''], c: [''] });
  });

  it('decodes plus as space and percent-encoded UTF-8', () => {
    expect(decode('n%C3%A4me=a+b%2Bc%20d')).toEqual({ 'näme': ['a b+c d'] });
  });

  it('skips empty pairs and empty names', () => {
    expect(decode('&&a=1&=x&')).toEqual({ a: ['1'] });
  });

  it('keeps everything after the first = in the value', () => {
    expect(decode('a=b=c')).toEqual({ a: ['b=c'] });
  });

  it('reports an invalid percent-encoding, naming the pair', () => {
    expect(decode('ok=1&bad=%E0%A4%A')).toMatch(/^malformed query string: invalid percent-encoding in "bad=%E0%A4%A"$/);
    expect(decode('x%zz=1')).toContain('invalid percent-encoding');
  });
});

describe('option values', () => {
  it('parses durations with a unit', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('10s')).toBe(10_000);
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('1.5s')).toBe(1500);
    for (const bad of ['10', '0s', '-1s', 's', '10 parsecs']) expect(parseDuration(bad), bad).toBeNull();
  });

  it('parses sizes in bytes, with optional units', () => {
    expect(parseSize('1024')).toBe(1024);
    expect(parseSize('10MiB')).toBe(10 * 1024 * 1024);
    expect(parseSize('512k')).toBe(512 * 1024);
    expect(parseSize('1mb')).toBe(1_000_000);
    for (const bad of ['0', '-5', '1.5M', 'lots']) expect(parseSize(bad), bad).toBeNull();
  });

  it('formats durations and origins for messages', () => {
    expect(formatDuration(60_000)).toBe('1m');
    expect(formatDuration(30_000)).toBe('30s');
    expect(formatDuration(300)).toBe('300ms');
    expect(originOf('127.0.0.1', 80)).toBe('http://127.0.0.1:80');
    expect(originOf('::1', 8080)).toBe('http://[::1]:8080');
  });
});

describe('hashMatches', () => {
  const endpoint = { name: 'order' } as Endpoint;
  const keys = [Buffer.from('k1'), Buffer.from('k2')];
  const hex = (text: string) => createHash('sha256').update(text).digest('hex');

  it('accepts a hash made with any key, in either case', () => {
    expect(hashMatches(endpoint, ['a', 'b'], 'live', keys, hex('orderablivek1'))).toBe(true);
    expect(hashMatches(endpoint, ['a', 'b'], 'live', keys, hex('orderablivek2').toUpperCase())).toBe(true);
  });

  it('refuses other values, a malformed hash and a missing one', () => {
    expect(hashMatches(endpoint, ['a', 'c'], 'live', keys, hex('orderablivek1'))).toBe(false);
    expect(hashMatches(endpoint, ['a', 'b'], 'live', keys, hex('orderablivek1').slice(1))).toBe(false);
    expect(hashMatches(endpoint, ['a', 'b'], 'live', keys, undefined)).toBe(false);
    expect(hashMatches(endpoint, ['a', 'b'], 'live', [], hex('orderablive'))).toBe(false);
  });
});
