// What the queue stores of a request is sealed with AES-256-GCM under ENDPOINT_SERVICE_QUEUE_KEY:
// form data and tokens from an auth call must not sit in the store in clear. Each blob is
// base64url(key id | 96-bit nonce | ciphertext | tag), bound to its job by the additional
// authenticated data, so a blob copied into another job does not open.

import { createCipheriv, createDecipheriv, createHash, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export interface QueueKey {
  readonly key: Buffer;
  /**
   * The same key as node:crypto holds it: made once, since a cipher given raw bytes makes one per
   * call, and that was most of the cost of sealing a small request (the delivery log seals one per request).
   */
  readonly secret: KeyObject;
  /** The first byte of the key's SHA-256: tells a blob sealed under another key from a damaged one. */
  readonly id: number;
}

/** 32 bytes written as base64 (44 characters) or hex (64 characters); null for anything else. */
export function parseQueueKey(text: string): QueueKey | null {
  const trimmed = text.trim();
  let key: Buffer | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) key = Buffer.from(trimmed, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (key === null || key.length !== 32) return null;
  return { key, secret: createSecretKey(key), id: createHash('sha256').update(key).digest()[0]! };
}

export class SealError extends Error {
  override readonly name = 'SealError';
}

/**
 * Nonces are cut from a buffer of random bytes drawn 256 at a time: one call into the random
 * source per 256 seals rather than per seal (it showed in the profile of serve --queue). Each
 * slice is used once, so every nonce is as random and as unique as one drawn alone; the pool is
 * per process (a --workers child draws its own).
 */
const NONCE_POOL_BYTES = NONCE_BYTES * 256;
let noncePool = Buffer.alloc(0);
let nonceOffset = 0;

function nextNonce(): Buffer {
  if (nonceOffset + NONCE_BYTES > noncePool.length) {
    noncePool = randomBytes(NONCE_POOL_BYTES);
    nonceOffset = 0;
  }
  return noncePool.subarray(nonceOffset, (nonceOffset += NONCE_BYTES));
}

/** Seals `plain` (a text, or bytes as they are) for the job `aad` under the first key. */
export function seal(keys: readonly QueueKey[], plain: string | Uint8Array, aad: string): string {
  const { secret, id } = keys[0]!;
  const nonce = nextNonce();
  const cipher = createCipheriv('aes-256-gcm', secret, nonce);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = typeof plain === 'string' ? cipher.update(plain, 'utf8') : cipher.update(plain);
  const final = cipher.final();
  return Buffer.concat([Buffer.from([id]), nonce, body, final, cipher.getAuthTag()]).toString('base64url');
}

/** Opens a sealed blob with whichever key sealed it (the current one or ENDPOINT_SERVICE_QUEUE_KEY_PREVIOUS). */
export function unseal(keys: readonly QueueKey[], sealed: string, aad: string): string {
  return unsealBytes(keys, sealed, aad).toString('utf8');
}

/** unseal, giving the bytes that were sealed. */
export function unsealBytes(keys: readonly QueueKey[], sealed: string, aad: string): Buffer {
  const blob = Buffer.from(sealed, 'base64url');
  if (blob.length < 1 + NONCE_BYTES + TAG_BYTES) throw new SealError('the sealed payload is too short');
  const candidates = keys.filter((k) => k.id === blob[0]);
  if (candidates.length === 0) throw new SealError('the payload was sealed under another ENDPOINT_SERVICE_QUEUE_KEY');
  for (const { secret } of candidates) {
    try {
      const decipher = createDecipheriv('aes-256-gcm', secret, blob.subarray(1, 1 + NONCE_BYTES));
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(blob.subarray(blob.length - TAG_BYTES));
      return Buffer.concat([decipher.update(blob.subarray(1 + NONCE_BYTES, blob.length - TAG_BYTES)), decipher.final()]);
    } catch {
      // The next candidate, if any: two keys may share a first hash byte.
    }
  }
  throw new SealError('the sealed payload cannot be opened: damaged, moved from another job, or sealed under another key');
}
