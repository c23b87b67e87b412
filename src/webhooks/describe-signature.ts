// From the attributes of a `<signature>` element to its SignatureDescription, or to the problems
// that stop it (docs/language.md, "<signature>"). Compile-time and pure: the compiler reads the
// attributes, expands the secret's (or the public key's) template, calls describeSignature once
// per element and reports each problem at its attribute; no request ever sees an attribute as text.
//
// A named sender (senders.ts) and the generic `hmac`, `ed25519` and `ecdsa-p256` end in the same
// SignatureSpec, built into a TemplateSignature by one function (buildSignature), so an entry of
// the catalogue is verified exactly as the attributes that say the same would be.
//
// A problem carries the diagnostic code it is reported under and that code's arguments, so the
// diagnostics table keeps the wording: `missing-attribute` and `invalid-value` are existing codes;
// `unknown-signature-scheme`, `attribute-not-for-scheme`, `invalid-signature-secret`,
// `invalid-public-key` and `invalid-signed-template` are this element's own. A literal secret
// (`secret-in-file`) is the compiler's to warn about: only it knows whether the value came from `${env:…}`.

import { createSecretKey } from 'node:crypto';
import { durationExpectation, parseDuration } from '../units.js';
import { decodeStandardSecret, tokenDigest } from './digest.js';
import { readPublicKey } from './public-key.js';
import { headerName } from './refusal.js';
import { senderEntry, type SenderEntry, type SignatureSpec } from './senders.js';
import { DEFAULT_TOLERANCE_MS, SIGNATURE_SCHEMES, type SignatureDescription, type TemplateSignature, type Verifier } from './signature-description.js';
import { parseSignedTemplate, uses } from './signed-template.js';
import { readGenericSpec } from './describe-generic.js';
import {
  HEADER_EXPECTED,
  OPTIONAL_ATTRIBUTES,
  PROPERTY,
  invalid,
  missingHeader,
  notForScheme,
  type SignatureAttributes,
  type SignatureOutcome,
  type SignatureProblem,
  type Suggest,
} from './signature-attributes.js';
import { FIELD_NAME } from './signed-template.js';

export type { SignatureAttributes, SignatureOutcome, SignatureProblem, Suggest } from './signature-attributes.js';

export function describeSignature(attributes: SignatureAttributes, suggest: Suggest): SignatureOutcome {
  const scheme = attributes.scheme.trim();
  if (!SIGNATURE_SCHEMES.includes(scheme)) {
    const suggestion = suggest(scheme, SIGNATURE_SCHEMES);
    const hint = suggestion === undefined ? ` Use one of ${SIGNATURE_SCHEMES.join(', ')}.` : ` Did you mean "${suggestion}"?`;
    return fail([{ code: 'unknown-signature-scheme', attribute: 'scheme', scheme, suggestion, message: `Unknown signature scheme "${scheme}".${hint}` }]);
  }
  if (scheme === 'token') return describeToken(attributes);
  const entry = senderEntry(scheme);
  const problems: SignatureProblem[] = [];
  const spec = entry !== undefined ? readEntry(entry, attributes, problems) : readGenericSpec(scheme, attributes, problems, suggest);
  const toleranceMs = readTolerance(attributes.tolerance, spec?.tolerance, problems);
  const keyKind = entry?.key ?? (scheme === 'hmac' ? 'secret' : 'public-key');
  const verifier = spec === null ? null : readVerifier(scheme, spec, keyKind, attributes, problems);
  if (problems.length > 0 || spec === null || verifier === null) return fail(problems);
  const built = buildSignature(scheme, spec, verifier, toleranceMs, suggest);
  if (typeof built === 'string') return fail([{ code: 'invalid-signed-template', attribute: 'signed', message: built }]);
  return done(built);
}

/** A named sender: only its key, and its tolerance when it signs a timestamp, are chosen. */
function readEntry(entry: SenderEntry, attributes: SignatureAttributes, problems: SignatureProblem[]): SignatureSpec {
  const timed = entry.timestampField !== undefined || entry.headers[0].timestamp !== undefined;
  for (const attribute of OPTIONAL_ATTRIBUTES) {
    if (attributes[PROPERTY[attribute]] === undefined || (attribute === 'tolerance' && timed)) continue;
    problems.push(notForScheme(attribute, entry.name, attribute === 'tolerance' ? 'it signs no timestamp' : FIXED));
  }
  return entry;
}

const FIXED = 'it fixes its headers, what is signed and how; use scheme="hmac" (or ed25519, ecdsa-p256) to choose them';

/** `token`: the header holds the shared secret itself. */
function describeToken(attributes: SignatureAttributes): SignatureOutcome {
  const problems: SignatureProblem[] = [];
  for (const attribute of OPTIONAL_ATTRIBUTES) {
    if (attribute !== 'header' && attributes[PROPERTY[attribute]] !== undefined)
      problems.push(notForScheme(attribute, 'token', 'it compares the header with the secret as it is'));
  }
  if (attributes.publicKey !== undefined) problems.push(notForScheme('public-key', 'token', 'it compares the header with the secret as it is'));
  const header = attributes.header?.trim();
  if (header === undefined) problems.push(missingHeader('token', 'token'));
  else if (!FIELD_NAME.test(header)) problems.push(invalid('header', header, HEADER_EXPECTED));
  const secret = attributes.secret ?? '';
  // Only whitespace too: a variable set to a blank line, which no sender shows as its secret.
  if (secret.trim().length === 0) problems.push(emptySecret('token'));
  if (problems.length > 0) return fail(problems);
  return done({ scheme: 'token', header: headerName(header!), tokenDigest: tokenDigest(secret) });
}

/** The key: an HMAC secret (as written, or a `whsec_` secret decoded) or a public key; null after reporting why there is none. */
function readVerifier(
  scheme: string,
  spec: SignatureSpec,
  keyKind: SenderEntry['key'],
  attributes: SignatureAttributes,
  problems: SignatureProblem[],
): Verifier | null {
  if (keyKind === 'public-key') {
    if (attributes.secret !== undefined) problems.push(notForScheme('secret', scheme, "it is verified with the sender's public key: use public-key"));
    const text = attributes.publicKey;
    if (text === undefined) {
      problems.push({
        code: 'missing-attribute',
        attribute: 'public-key',
        element: 'signature',
        message: `<signature scheme="${scheme}"> needs a "public-key" attribute.`,
      });
      return null;
    }
    const kind = spec.verify === 'ed25519' ? 'ed25519' : 'ecdsa-p256';
    const key = readPublicKey(text, kind);
    if (key === null) problems.push(badPublicKey(scheme, kind));
    return key === null ? null : { kind, key };
  }
  if (attributes.publicKey !== undefined) problems.push(notForScheme('public-key', scheme, 'it is verified with a shared secret: use secret'));
  const secret = attributes.secret ?? '';
  if (secret.trim().length === 0) {
    problems.push(emptySecret(scheme));
    return null;
  }
  const bytes = keyKind === 'whsec' ? decodeStandardSecret(secret) : Buffer.from(secret, 'utf8');
  if (bytes === null) {
    problems.push({
      code: 'invalid-signature-secret',
      attribute: 'secret',
      message: `The secret of <signature scheme="${scheme}"> is not "whsec_" followed by base64: copy the signing secret exactly as the sender shows it.`,
    });
    return null;
  }
  return { kind: 'hmac', algorithm: spec.algorithm ?? 'sha256', key: createSecretKey(bytes) };
}

function badPublicKey(scheme: string, kind: 'ed25519' | 'ecdsa-p256'): SignatureProblem {
  const what = kind === 'ed25519' ? 'an Ed25519 public key' : 'an ECDSA P-256 public key';
  return {
    code: 'invalid-public-key',
    attribute: 'public-key',
    message: `The public-key of <signature scheme="${scheme}"> is not ${what} in hex, base64, PEM or DER: copy it exactly as the sender publishes it.`,
  };
}

/**
 * An empty (or blank) secret is refused for every scheme: an HMAC with an empty key is one anyone
 * can make, and an empty token is matched by an empty header. The message never quotes a secret.
 */
function emptySecret(scheme: string): SignatureProblem {
  return {
    code: 'invalid-signature-secret',
    attribute: 'secret',
    message: `The secret of <signature scheme="${scheme}"> is empty or only whitespace: set it to the secret the sender shows.`,
  };
}

/** The description of a spec: one shape for every scheme that signs. A template that does not parse is a string: why. */
export function buildSignature(scheme: string, spec: SignatureSpec, verifier: Verifier, toleranceMs: number, suggest: Suggest): TemplateSignature | string {
  const parsed = parseSignedTemplate(spec.signed, suggest);
  if (!parsed.ok) return parsed.message;
  const timed = spec.timestampField !== undefined || spec.headers[0].timestamp !== undefined;
  const families = spec.headers.map((set) => ({
    signature: headerName(set.signature),
    timestamp: set.timestamp === undefined ? null : headerName(set.timestamp),
    id: set.id === undefined ? null : headerName(set.id),
  }));
  return {
    scheme,
    verifier,
    families: families as unknown as TemplateSignature['families'],
    format: { prefix: spec.prefix ?? '', field: spec.field ?? null, separator: spec.separator ?? ',', list: spec.list === true, encoding: spec.encoding },
    signed: parsed.parts,
    template: spec.signed,
    timestamp: timed && uses(parsed.parts, 'timestamp') ? { field: spec.timestampField ?? null, format: spec.timestampFormat ?? 'seconds' } : null,
    toleranceMs: timed ? toleranceMs : null,
  };
}

const done = (signature: SignatureDescription): SignatureOutcome => ({ ok: true, signature });
const fail = (problems: readonly SignatureProblem[]): SignatureOutcome => ({ ok: false, problems });

/** `tolerance` as written (already refused where it does not apply), else the sender's own, else 5 minutes. */
function readTolerance(value: string | undefined, senders: string | undefined, problems: SignatureProblem[]): number {
  const given = value ?? senders;
  if (given === undefined) return DEFAULT_TOLERANCE_MS;
  const ms = parseDuration(given);
  if (ms !== null) return ms;
  if (problems.some((p) => p.attribute === 'tolerance')) return DEFAULT_TOLERANCE_MS;
  problems.push(invalid('tolerance', given, durationExpectation(given)));
  return DEFAULT_TOLERANCE_MS;
}
