// A sender's public key as the sender publishes it (docs/language.md, "<signature>"): Discord's
// 32 bytes of Ed25519 in hex, SendGrid's DER (SubjectPublicKeyInfo) in base64, Standard
// Webhooks' `whpk_` and base64, or a PEM block; hex or base64 of the raw key or of its DER.
// Read once at compile time into a KeyObject with node:crypto; null when it is none of these or
// a key of another type (an RSA key where Ed25519 is expected).

import { createPublicKey, type KeyObject } from 'node:crypto';

export type PublicKeyKind = 'ed25519' | 'ecdsa-p256';

const HEX = /^[0-9a-fA-F]+$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
const STANDARD_PUBLIC_PREFIX = 'whpk_';

export function readPublicKey(text: string, kind: PublicKeyKind): KeyObject | null {
  const trimmed = text.trim();
  if (trimmed.includes('-----BEGIN'))
    return checked(
      attempt(() => createPublicKey(trimmed)),
      kind,
    );
  const bare = trimmed.startsWith(STANDARD_PUBLIC_PREFIX) ? trimmed.slice(STANDARD_PUBLIC_PREFIX.length) : trimmed;
  const encodings: BufferEncoding[] = [];
  if (HEX.test(bare) && bare.length % 2 === 0) encodings.push('hex');
  if (BASE64.test(bare)) encodings.push(bare.includes('-') || bare.includes('_') ? 'base64url' : 'base64');
  for (const encoding of encodings) {
    const key = fromBytes(Buffer.from(bare, encoding), kind);
    if (key !== null) return key;
  }
  return null;
}

/** The raw key (32 bytes of Ed25519, 65 of an uncompressed P-256 point), or its DER. */
function fromBytes(bytes: Buffer, kind: PublicKeyKind): KeyObject | null {
  if (kind === 'ed25519' && bytes.length === 32) {
    return checked(
      attempt(() => createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: bytes.toString('base64url') }, format: 'jwk' })),
      kind,
    );
  }
  if (kind === 'ecdsa-p256' && bytes.length === 65 && bytes[0] === 0x04) {
    const x = bytes.subarray(1, 33).toString('base64url');
    const y = bytes.subarray(33).toString('base64url');
    return checked(
      attempt(() => createPublicKey({ key: { kty: 'EC', crv: 'P-256', x, y }, format: 'jwk' })),
      kind,
    );
  }
  return checked(
    attempt(() => createPublicKey({ key: bytes, format: 'der', type: 'spki' })),
    kind,
  );
}

function attempt(make: () => KeyObject): KeyObject | null {
  try {
    return make();
  } catch {
    return null;
  }
}

function checked(key: KeyObject | null, kind: PublicKeyKind): KeyObject | null {
  if (key === null || key.type !== 'public') return null;
  if (kind === 'ed25519') return key.asymmetricKeyType === 'ed25519' ? key : null;
  return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' ? key : null;
}
