// seal and unseal on their own: every blob has a nonce of its own (nonces are cut from a pool of
// random bytes, refilled every 256 seals), opens to what was sealed, and only for its own job.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseQueueKey, seal, SealError, unseal } from '../../src/queue/seal.js';

const keys = [parseQueueKey(randomBytes(32).toString('base64'))!];
/** The nonce of a blob: after the key id byte, 12 bytes. */
const nonceOf = (blob: string) => Buffer.from(blob, 'base64url').subarray(1, 13).toString('hex');

describe('seal', () => {
  it('gives every blob a nonce of its own, across refills of the pool', () => {
    const blobs = Array.from({ length: 1000 }, (_, i) => seal(keys, `value ${i % 3}`, `job.${i}`));
    expect(new Set(blobs.map(nonceOf)).size).toBe(1000);
    blobs.forEach((blob, i) => expect(unseal(keys, blob, `job.${i}`)).toBe(`value ${i % 3}`));
  });

  it('seals the same text for the same job differently each time', () => {
    expect(seal(keys, 'same', 'job.1')).not.toBe(seal(keys, 'same', 'job.1'));
  });

  it('does not open for another job', () => {
    expect(() => unseal(keys, seal(keys, 'x', 'job.1'), 'job.2')).toThrow(SealError);
  });
});
