// Zoom's signature (docs/language.md, "<handshake>"): Zoom signs every request it sends, its URL
// validation included, as the catalogue's `zoom` entry says (senders.ts): `x-zm-signature: v0=<hex>`
// over `v0:<x-zm-request-timestamp>:<body>` with the app's secret token, the very key the
// handshake's answer is made with. The handshake is answered only when this verifies: the answer
// is an HMAC of a value the caller chooses, and answering anyone would hand out Zoom signatures
// (of `v0:<ts>:<any body>`) to whoever asks. Verified by the same code as `<signature scheme="zoom">`.

import type { KeyObject } from 'node:crypto';
import { buildSignature } from './describe-signature.js';
import type { SignedRequest } from './refusal.js';
import { senderEntry } from './senders.js';
import { DEFAULT_TOLERANCE_MS, type TemplateSignature, type VerificationResult } from './signature-description.js';
import { verifyTemplate } from './verify-template.js';

const ZOOM = senderEntry('zoom')!;

/** The description of Zoom's signature under `key`: the catalogue's entry, as `<signature scheme="zoom">` builds it. */
export function zoomSignature(key: KeyObject): TemplateSignature {
  const built = buildSignature('zoom', ZOOM, { kind: 'hmac', algorithm: 'sha256', key }, DEFAULT_TOLERANCE_MS, () => undefined);
  if (typeof built === 'string') throw new Error(`the zoom entry of the catalogue does not build: ${built}`);
  return built;
}

export function verifyZoom(key: KeyObject, request: SignedRequest, now: number | null): VerificationResult {
  return verifyTemplate(zoomSignature(key), request, now);
}
