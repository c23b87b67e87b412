// What the webhook tests share: descriptions built the way the compiler will build them, headers
// as node:http hands them over, and the check that a refusal quotes nothing it was sent.
import { expect } from 'vitest';
import { closest } from '../../src/compiler/suggest.js';
import { describeSignature, type SignatureAttributes } from '../../src/webhooks/describe-signature.js';
import type { RefusalReason, RequestHeaders, SignatureDescription, VerificationResult } from '../../src/webhooks/signature-description.js';

/** The description of `<signature …>`; fails the test when the attributes have problems. */
export function signature(attributes: SignatureAttributes): SignatureDescription {
  const outcome = describeSignature(attributes, closest);
  if (!outcome.ok) throw new Error(`unexpected problems: ${outcome.problems.map((p) => p.message).join('; ')}`);
  return outcome.signature;
}

/** Headers as node:http's headersDistinct gives them: lower-case names, every value a list. */
export function headers(record: Readonly<Record<string, string | readonly string[]>>): RequestHeaders {
  return Object.fromEntries(Object.entries(record).map(([name, value]) => [name.toLowerCase(), typeof value === 'string' ? [value] : [...value]]));
}

/**
 * A refusal for `reason` whose detail names what failed but quotes none of `secrets` (header
 * values, the secret itself): it is sent back in a 401 and logged.
 */
export function expectRefused(result: VerificationResult, reason: RefusalReason, secrets: readonly string[]): void {
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.reason).toBe(reason);
  expect(result.detail.length).toBeGreaterThan(10);
  for (const secret of secrets.filter((s) => s.length >= 4)) expect(result.detail).not.toContain(secret);
}

export const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
export const nowSeconds = Math.floor(NOW / 1000);

/** `body` with one byte changed, the same length: the signature must no longer match. */
export function tampered(body: Buffer): Buffer {
  const copy = Buffer.from(body);
  copy[Math.floor(copy.length / 2)]! ^= 0x01;
  return copy;
}
