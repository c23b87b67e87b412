import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sealRequest, unsealRequest } from '../../src/deliveries/sealed-request.js';
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
