// Verifying a delivery against a TemplateSignature (docs/language.md, "<signature>"): every
// scheme that signs, the named senders and the generic ones, is checked here and only here.
// Read the signature header (of the family that is present), the timestamp and id where the
// scheme has them, build the signed bytes from the template over the raw body, and check each
// candidate signature: an HMAC compared in constant time, or a public key's signature. The
// timestamp's tolerance is checked last, so a forged delivery says "no match" whatever its age.

import { createHmac, verify, type KeyObject } from 'node:crypto';
import { DIGEST_LENGTH, decodeBetween, decodeDigest, sameBytes } from './digest.js';
import { VERIFIED, noMatch, outsideToleranceMs, present, readValue, refuse, where, type Refusal, type SignedRequest } from './refusal.js';
import type { HeaderFamily, HeaderName, SignedPart, TemplateSignature, TimestampFormat, VerificationResult } from './signature-description.js';

/** What the headers gave: the signatures to try, and the timestamp and id as sent. */
interface Read {
  readonly candidates: readonly Buffer[];
  readonly timestamp: string;
  readonly timestampMs: number | null;
  readonly timestampHeader: HeaderName;
  readonly id: string;
}

export function verifyTemplate(signature: TemplateSignature, request: SignedRequest, now: number | null): VerificationResult {
  const family = signature.families.find((f) => present(request, f.signature)) ?? signature.families[0];
  const read = readHeaders(signature, family, request);
  if ('ok' in read) return read;
  const message = signedParts(signature.signed, request, read);
  if (!Array.isArray(message)) return message as Refusal;
  if (!matches(signature, message, read.candidates)) return noMatch(family.signature);
  if (read.timestampMs === null || signature.toleranceMs === null) return VERIFIED;
  return outsideToleranceMs(read.timestampMs, now, signature.toleranceMs, read.timestampHeader) ?? VERIFIED;
}

function readHeaders(signature: TemplateSignature, family: HeaderFamily, request: SignedRequest): Read | Refusal {
  const value = readValue(request, family.signature);
  if (typeof value !== 'string') return value.reason === 'missing-header' ? missing(signature) : value;
  const timestampSent = family.timestamp === null ? null : readValue(request, family.timestamp);
  if (timestampSent !== null && typeof timestampSent !== 'string') return timestampSent;
  const id = family.id === null ? '' : readValue(request, family.id);
  if (typeof id !== 'string') return id;
  if (family.id !== null && id.length === 0) return refuse('malformed-header', `${where(family.id)} is empty`);
  const fields = signature.format.field === null ? null : structuredFields(value, signature.format.separator);
  let timestamp = timestampSent ?? '';
  const timestampField = signature.timestamp?.field ?? null;
  if (timestampField !== null) {
    const sent = fields?.get(timestampField) ?? [];
    if (sent.length !== 1) return malformed(signature, family.signature);
    timestamp = sent[0]!;
  }
  const timestampHeader = family.timestamp ?? family.signature;
  let timestampMs: number | null = null;
  if (signature.timestamp !== null) {
    timestampMs = parseTimestamp(timestamp, signature.timestamp.format);
    if (timestampMs === null) {
      if (timestampField !== null) return malformed(signature, family.signature);
      return refuse('malformed-header', `${where(timestampHeader)} is not ${TIMESTAMP_WORDS[signature.timestamp.format]}`);
    }
  }
  const candidates = candidatesOf(signature, value, fields);
  if (candidates.length === 0) return malformed(signature, family.signature);
  return { candidates, timestamp, timestampMs, timestampHeader, id };
}

/** `key=value` fields separated by `separator` (Stripe's `t=…,v1=…`, Paddle's `ts=…;h1=…`), each key with every value it was given. */
function structuredFields(value: string, separator: ',' | ';'): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  for (const item of value.split(separator)) {
    const eq = item.indexOf('=');
    if (eq < 0) continue;
    const key = item.slice(0, eq).trim();
    const list = fields.get(key) ?? [];
    list.push(item.slice(eq + 1).trim());
    fields.set(key, list);
  }
  return fields;
}

/** The signatures written in the header that decode to the right length; other entries (other versions, other fields) are skipped. */
function candidatesOf(signature: TemplateSignature, value: string, fields: Map<string, string[]> | null): Buffer[] {
  const { prefix, field, list } = signature.format;
  const texts = field !== null ? (fields!.get(field) ?? []) : list ? value.split(' ') : [value];
  const candidates: Buffer[] = [];
  for (const text of texts) {
    if (!text.startsWith(prefix)) continue;
    const bytes = decodeSignature(signature, text.slice(prefix.length));
    if (bytes !== null) candidates.push(bytes);
  }
  return candidates;
}

// An ECDSA signature in DER is at most 72 bytes for P-256; 64 bytes is r and s side by side (IEEE P1363).
const ECDSA_MAX = 72;
const ECDSA_MIN = 8;

function decodeSignature(signature: TemplateSignature, text: string): Buffer | null {
  const { verifier } = signature;
  const encoding = signature.format.encoding;
  if (verifier.kind === 'hmac') return decodeDigest(text, encoding, DIGEST_LENGTH[verifier.algorithm]);
  if (verifier.kind === 'ed25519') return decodeDigest(text, encoding, 64);
  return decodeBetween(text, encoding, ECDSA_MIN, ECDSA_MAX);
}

const TIMESTAMP_WORDS: Readonly<Record<TimestampFormat, string>> = {
  seconds: 'a time in unix seconds',
  milliseconds: 'a time in unix milliseconds',
  rfc3339: 'an RFC 3339 date and time',
};
// As senders write them: digits only (a sign, a fraction or an exponent would be read differently
// by the sender's own library), at most 12 of them for seconds, 15 for milliseconds.
const SECONDS = /^\d{1,12}$/;
const MILLISECONDS = /^\d{1,15}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** Epoch milliseconds of a timestamp as sent, or null when it is not written as the format says. */
export function parseTimestamp(text: string, format: TimestampFormat): number | null {
  switch (format) {
    case 'seconds':
      return SECONDS.test(text) ? Number(text) * 1000 : null;
    case 'milliseconds':
      return MILLISECONDS.test(text) ? Number(text) : null;
    case 'rfc3339': {
      if (!RFC3339.test(text)) return null;
      // Date.parse reads milliseconds at most: a longer fraction (Twitch writes nanoseconds) is cut.
      const ms = Date.parse(text.replace(/(\.\d{3})\d+/, '$1'));
      return Number.isNaN(ms) ? null : ms;
    }
  }
}

/** The signed bytes in order: strings and the body, never copied into one buffer for an HMAC. */
function signedParts(parts: readonly SignedPart[], request: SignedRequest, read: Read): (string | Buffer)[] | Refusal {
  const out: (string | Buffer)[] = [];
  for (const part of parts) {
    switch (part.kind) {
      case 'literal':
        out.push(part.text);
        break;
      case 'body':
        out.push(request.body);
        break;
      case 'timestamp':
        out.push(read.timestamp);
        break;
      case 'id':
        out.push(read.id);
        break;
      case 'method':
        out.push(request.method ?? 'POST');
        break;
      case 'url':
        out.push(request.url ?? '');
        break;
      case 'form-sorted':
        out.push(formSorted(request.body));
        break;
      case 'header': {
        const value = readValue(request, part.header);
        if (typeof value !== 'string') return value;
        out.push(value);
      }
    }
  }
  return out;
}

/**
 * The form's fields sorted by name, each name followed by its value, as Twilio signs them
 * (twilio-node's getExpectedTwilioSignature): a name sent several times is written once per
 * distinct value, the values sorted.
 */
export function formSorted(body: Buffer): string {
  const fields = new Map<string, Set<string>>();
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
    const values = fields.get(name) ?? new Set<string>();
    values.add(value);
    fields.set(name, values);
  }
  let text = '';
  for (const name of [...fields.keys()].sort()) {
    for (const value of [...fields.get(name)!].sort()) text += name + value;
  }
  return text;
}

function matches(signature: TemplateSignature, message: readonly (string | Buffer)[], candidates: readonly Buffer[]): boolean {
  const { verifier } = signature;
  if (verifier.kind === 'hmac') {
    const mac = createHmac(verifier.algorithm, verifier.key);
    for (const part of message) {
      if (typeof part === 'string') mac.update(part, 'utf8');
      else mac.update(part);
    }
    const expected = mac.digest();
    // Every candidate is compared, a match or not, so the time taken says nothing of which one matched.
    let found = false;
    for (const candidate of candidates) found = sameBytes(expected, candidate) || found;
    return found;
  }
  const data = Buffer.concat(message.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : part)));
  return candidates.some((candidate) => verifyPublic(verifier.kind, verifier.key, data, candidate));
}

function verifyPublic(kind: 'ed25519' | 'ecdsa-p256', key: KeyObject, data: Buffer, candidate: Buffer): boolean {
  try {
    if (kind === 'ed25519') return verify(null, data, key, candidate);
    // r and s side by side is 64 bytes; a DER sequence is never exactly 64 for P-256 with SHA-256.
    return verify('sha256', data, { key, dsaEncoding: candidate.length === 64 ? 'ieee-p1363' : 'der' }, candidate);
  } catch {
    // A DER signature that does not parse is a signature that does not verify.
    return false;
  }
}

function missing(signature: TemplateSignature): Refusal {
  const [first, ...others] = signature.families;
  const also = others.length === 0 ? '' : ` (or ${others.map((f) => f.signature.name).join(', or ')})`;
  if (first.signature.pointer !== undefined) return refuse('missing-header', `${where(first.signature)} is missing`);
  return refuse('missing-header', `the ${first.signature.name}${also} header is missing`);
}

function malformed(signature: TemplateSignature, header: HeaderName): Refusal {
  return refuse('malformed-header', `${where(header)} ${expectation(signature)}`);
}

/** What the signature header should hold, in words, for a malformed one's detail. */
export function expectation(signature: TemplateSignature): string {
  const { format, verifier } = signature;
  const what =
    verifier.kind === 'hmac'
      ? `${verifier.algorithm} digest in ${format.encoding}`
      : `${verifier.kind === 'ed25519' ? 'Ed25519' : 'ECDSA P-256'} signature in ${format.encoding}`;
  if (format.field !== null) {
    const field = signature.timestamp?.field;
    return `is not ${field != null ? `${field}=<${TIMESTAMP_WORDS[signature.timestamp!.format]}> with ` : ''}at least one ${format.field}=<${format.prefix}${what}>`;
  }
  if (format.list) return `holds no ${format.prefix}<${what}> signature`;
  const article = verifier.kind === 'hmac' ? 'a' : 'an';
  return `is not ${format.prefix.length > 0 ? `"${format.prefix}" followed by ` : ''}${article} ${what}`;
}
