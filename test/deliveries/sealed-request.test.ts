import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { groupNamed, sealRequest, sealRequests, unsealRequest, withGroup } from '../../src/deliveries/sealed-request.js';
import { parseQueueKey, seal, SealError } from '../../src/queue/seal.js';

const keys = [parseQueueKey(randomBytes(32).toString('hex'))!];
const body = Buffer.concat([Buffer.from('{"text":"caf\u00e9"}'), Buffer.from([0, 255, 10])]);
const captured = {
  method: 'POST',
  url: '/hook?x=1',
  rawHeaders: ['Host', 'a', 'X-Latin', 'caf\u00e9', 'Host', 'b'],
  body: [body.subarray(0, 7), body.subarray(7)],
};

describe('a kept request, sealed', () => {
  it('opens to its method, URL, headers in order and body byte for byte', () => {
    const sealed = sealRequest(keys, 'd1', captured);
    expect(Buffer.from(sealed, 'base64url').includes(Buffer.from('text'))).toBe(false);
    expect(unsealRequest(keys, 'd1', sealed)).toEqual({
      method: 'POST',
      url: '/hook?x=1',
      headers: [
        ['Host', 'a'],
        ['X-Latin', 'caf\u00e9'],
        ['Host', 'b'],
      ],
      body,
    });
    expect(unsealRequest(keys, 'd1', sealRequest(keys, 'd1', { ...captured, body: null })).body).toEqual(Buffer.alloc(0));
  });

  it('opens for its own delivery only, and not when a byte changed', () => {
    const sealed = sealRequest(keys, 'd1', captured);
    expect(() => unsealRequest(keys, 'd2', sealed)).toThrow(SealError);
    const bytes = Buffer.from(sealed, 'base64url');
    bytes[bytes.length - 20]! ^= 1;
    expect(() => unsealRequest(keys, 'd1', bytes.toString('base64url'))).toThrow(SealError);
  });

  it('still opens what the first format sealed: JSON with the body in base64', () => {
    const first = seal(keys, JSON.stringify({ m: 'GET', u: '/', h: [['Host', 'a']], b: Buffer.from('hi').toString('base64') }), 'delivery:d0');
    expect(unsealRequest(keys, 'd0', first)).toEqual({ method: 'GET', url: '/', headers: [['Host', 'a']], body: Buffer.from('hi') });
  });
});

describe("a batch's kept requests, sealed", () => {
  const small = (i: number) => ({ delivery: `d${i}`, request: { ...captured, url: `/hook?i=${i}` } });
  /** What a store gives back for delivery i of a sealRequests result. */
  const stored = (result: ReturnType<typeof sealRequests>, i: number) => {
    const group = groupNamed(result.sealed[i]!);
    return group === null ? result.sealed[i]! : withGroup(group, result.groups.find((g) => g.id === group)!.sealed);
  };

  it('seals the small ones together, each opening to its own request for its own delivery only', () => {
    const requests = [0, 1, 2].map(small);
    const result = sealRequests(keys, requests);
    expect(result.groups.map((g) => g.id)).toEqual(['d0']);
    expect(result.sealed).toEqual(['g.d0', 'g.d0', 'g.d0']);
    for (const [i, { delivery }] of requests.entries()) expect(unsealRequest(keys, delivery, stored(result, i)).url).toBe(`/hook?i=${i}`);
    expect(() => unsealRequest(keys, 'd7', stored(result, 0))).toThrow(/holds no request of delivery d7/);
    const bytes = Buffer.from(result.groups[0]!.sealed, 'base64url');
    bytes[bytes.length - 20]! ^= 1;
    expect(() => unsealRequest(keys, 'd1', withGroup('d0', bytes.toString('base64url')))).toThrow(SealError);
    expect(() => unsealRequest(keys, 'd1', withGroup('d1', result.groups[0]!.sealed))).toThrow(SealError);
    expect(bytes.includes(Buffer.from('hook'))).toBe(false);
  });

  it('seals alone a request over 64 KiB, and one with no other to share a group', () => {
    const large = { delivery: 'big', request: { ...captured, body: [Buffer.alloc(70_000, 7)] } };
    const result = sealRequests(keys, [small(0), large, small(1)]);
    expect(groupNamed(result.sealed[1]!)).toBeNull();
    expect(unsealRequest(keys, 'big', result.sealed[1]!).body).toEqual(Buffer.alloc(70_000, 7));
    expect(result.sealed[0]).toBe('g.d0');
    expect(unsealRequest(keys, 'd1', stored(result, 2)).url).toBe('/hook?i=1');
    const alone = sealRequests(keys, [small(5)]);
    expect(alone.groups).toEqual([]);
    expect(unsealRequest(keys, 'd5', alone.sealed[0]!).url).toBe('/hook?i=5');
  });

  it('starts a new group before one would exceed 1 MiB', () => {
    const requests = Array.from({ length: 40 }, (_, i) => ({ delivery: `d${i}`, request: { ...captured, body: [Buffer.alloc(60_000, i)] } }));
    const result = sealRequests(keys, requests);
    expect(result.groups.length).toBe(3);
    for (const g of result.groups) expect(Buffer.from(g.sealed, 'base64url').length).toBeLessThanOrEqual((1 << 20) + 64);
    for (const [i, { delivery }] of requests.entries()) expect(unsealRequest(keys, delivery, stored(result, i)).body).toEqual(Buffer.alloc(60_000, i));
  });
});
