// The pure parts of serve: query and form decoding, the listening origin, hash comparison.
// Durations and sizes: test/units.test.ts.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Endpoint } from '../../src/compiler/ast.js';
import { hashMatches } from '../../src/runtime/hash.js';
import { parseUrlEncoded } from '../../src/runtime/urlencoded.js';
import { originOf } from '../../src/server/options.js';

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

describe('originOf', () => {
  it('names the listening address, an IPv6 host in brackets', () => {
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
