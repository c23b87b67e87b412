// From the attributes of a `<signature>` element to its SignatureDescription, or to the problems
// that stop it (docs/language.md, "<signature>"). Compile-time and pure: the compiler reads the
// attributes, expands the secret's template, calls describeSignature once per element and
// reports each problem at its attribute; no request ever sees an attribute as text.
//
// A problem carries the diagnostic code it is reported under and that code's arguments, so the
// diagnostics table keeps the wording: `missing-attribute` and `invalid-value` are existing codes;
// `unknown-signature-scheme`, `attribute-not-for-scheme` and `invalid-signature-secret` are this
// element's own. A literal secret (`secret-in-file`) is the compiler's to warn about: only it
// knows whether the value came from `${env:…}`.

import { createSecretKey } from 'node:crypto';
import { durationExpectation, parseDuration } from '../units.js';
import { decodeStandardSecret, tokenDigest } from './digest.js';
import { headerName } from './refusal.js';
import {
  DEFAULT_TOLERANCE_MS,
  DIGEST_ENCODINGS,
  HMAC_ALGORITHMS,
  SIGNATURE_SCHEMES,
  type SignatureDescription,
  type SignatureScheme,
} from './signature-description.js';

/** The attributes as written; absent ones undefined. `secret` is its template's expansion. */
export interface SignatureAttributes {
  readonly scheme: string;
  readonly secret: string;
  readonly header?: string | undefined;
  readonly algorithm?: string | undefined;
  readonly encoding?: string | undefined;
  readonly prefix?: string | undefined;
  readonly tolerance?: string | undefined;
}

/** The attributes a scheme may be given besides `scheme` and `secret`. */
type OptionalAttribute = 'header' | 'algorithm' | 'encoding' | 'prefix' | 'tolerance';
const OPTIONAL_ATTRIBUTES: readonly OptionalAttribute[] = ['header', 'algorithm', 'encoding', 'prefix', 'tolerance'];

export type SignatureProblem =
  | {
      readonly code: 'unknown-signature-scheme';
      readonly attribute: 'scheme';
      readonly scheme: string;
      readonly suggestion: string | undefined;
      readonly message: string;
    }
  | { readonly code: 'missing-attribute'; readonly attribute: 'header'; readonly element: 'signature'; readonly message: string }
  | { readonly code: 'attribute-not-for-scheme'; readonly attribute: OptionalAttribute; readonly scheme: SignatureScheme; readonly message: string }
  | {
      readonly code: 'invalid-value';
      readonly attribute: 'header' | 'algorithm' | 'encoding' | 'tolerance';
      readonly value: string;
      readonly expected: string;
      readonly message: string;
    }
  | { readonly code: 'invalid-signature-secret'; readonly attribute: 'secret'; readonly message: string };

export type SignatureOutcome =
  { readonly ok: true; readonly signature: SignatureDescription } | { readonly ok: false; readonly problems: readonly SignatureProblem[] };

/** "Did you mean": the compiler passes its per-compile Suggestions (src/compiler/suggest.ts), which keeps its budget. */
export type Suggest = (name: string, candidates: readonly string[]) => string | undefined;

/** What each scheme lets the configuration choose; everything else it fixes. */
const CHOSEN: Readonly<Record<SignatureScheme, readonly OptionalAttribute[]>> = {
  github: [],
  stripe: ['tolerance'],
  slack: ['tolerance'],
  shopify: [],
  standard: ['tolerance'],
  hmac: ['header', 'algorithm', 'encoding', 'prefix'],
  token: ['header'],
};

// RFC 9110 §5.1: a field name is a token.
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function describeSignature(attributes: SignatureAttributes, suggest: Suggest): SignatureOutcome {
  const scheme = attributes.scheme.trim();
  if (!isScheme(scheme)) {
    const suggestion = suggest(scheme, SIGNATURE_SCHEMES);
    const hint = suggestion === undefined ? ` Use one of ${SIGNATURE_SCHEMES.join(', ')}.` : ` Did you mean "${suggestion}"?`;
    return fail([{ code: 'unknown-signature-scheme', attribute: 'scheme', scheme, suggestion, message: `Unknown signature scheme "${scheme}".${hint}` }]);
  }
  const problems: SignatureProblem[] = [];
  for (const attribute of OPTIONAL_ATTRIBUTES) {
    if (attributes[attribute] !== undefined && !CHOSEN[scheme].includes(attribute)) problems.push(notForScheme(attribute, scheme));
  }
  if ((scheme === 'hmac' || scheme === 'token') && attributes.header === undefined) {
    problems.push({
      code: 'missing-attribute',
      attribute: 'header',
      element: 'signature',
      message: `<signature scheme="${scheme}"> needs a "header" attribute: the request header that carries the ${scheme === 'token' ? 'token' : 'signature'}.`,
    });
  }
  const header = attributes.header?.trim();
  if (header !== undefined && CHOSEN[scheme].includes('header') && !FIELD_NAME.test(header)) {
    problems.push(invalid('header', header, "a header name (letters, digits and !#$%&'*+-.^_`|~, no spaces or colon)"));
  }
  const algorithm = pick(attributes.algorithm, HMAC_ALGORITHMS, 'algorithm', problems, scheme) ?? 'sha256';
  const encoding = pick(attributes.encoding, DIGEST_ENCODINGS, 'encoding', problems, scheme) ?? 'hex';
  const toleranceMs = readTolerance(attributes.tolerance, problems, scheme);
  const key = readKey(scheme, attributes.secret, problems);
  if (problems.length > 0 || key === null) return fail(problems);

  switch (scheme) {
    case 'github':
    case 'shopify':
      return done({ scheme, key: createSecretKey(key) });
    case 'stripe':
    case 'slack':
    case 'standard':
      return done({ scheme, key: createSecretKey(key), toleranceMs });
    case 'hmac':
      return done({ scheme, key: createSecretKey(key), header: headerName(header!), prefix: attributes.prefix ?? '', algorithm, encoding });
    case 'token':
      return done({ scheme, header: headerName(header!), tokenDigest: tokenDigest(attributes.secret) });
  }
}

function isScheme(name: string): name is SignatureScheme {
  return (SIGNATURE_SCHEMES as readonly string[]).includes(name);
}

const done = (signature: SignatureDescription): SignatureOutcome => ({ ok: true, signature });
const fail = (problems: readonly SignatureProblem[]): SignatureOutcome => ({ ok: false, problems });

function invalid(attribute: 'header' | 'algorithm' | 'encoding' | 'tolerance', value: string, expected: string): SignatureProblem {
  return { code: 'invalid-value', attribute, value, expected, message: `"${value}" is not a valid value for ${attribute}: expected ${expected}.` };
}

function notForScheme(attribute: OptionalAttribute, scheme: SignatureScheme): SignatureProblem {
  const why =
    attribute === 'tolerance'
      ? `it signs no timestamp (stripe, slack and standard do)`
      : scheme === 'token'
        ? `it compares the header with the secret as it is`
        : `it fixes its header, digest and encoding; use scheme="hmac" to choose them`;
  return {
    code: 'attribute-not-for-scheme',
    attribute,
    scheme,
    message: `"${attribute}" does not apply to <signature scheme="${scheme}">: ${why}. Remove it.`,
  };
}

/** An `algorithm` or `encoding` that hmac chooses; undefined when absent or already reported. */
function pick<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  attribute: 'algorithm' | 'encoding',
  problems: SignatureProblem[],
  scheme: SignatureScheme,
): T | undefined {
  if (value === undefined || scheme !== 'hmac') return undefined;
  const trimmed = value.trim();
  if ((allowed as readonly string[]).includes(trimmed)) return trimmed as T;
  problems.push(invalid(attribute, value, allowed.join(' or ')));
  return undefined;
}

function readTolerance(value: string | undefined, problems: SignatureProblem[], scheme: SignatureScheme): number {
  if (value === undefined || !CHOSEN[scheme].includes('tolerance')) return DEFAULT_TOLERANCE_MS;
  const ms = parseDuration(value);
  if (ms !== null) return ms;
  problems.push(invalid('tolerance', value, durationExpectation(value)));
  return DEFAULT_TOLERANCE_MS;
}

/**
 * The HMAC key's bytes, or null after reporting why there are none. The message never quotes the
 * secret: it may have come from the environment, and diagnostics are printed and logged. An
 * empty (or blank) secret is refused for every scheme: an HMAC with an empty key is one anyone
 * can make, and an empty token is matched by an empty header.
 */
function readKey(scheme: SignatureScheme, secret: string, problems: SignatureProblem[]): Buffer | null {
  // Only whitespace too: a variable set to a blank line, which no sender shows as its secret.
  if (secret.trim().length === 0) {
    problems.push({
      code: 'invalid-signature-secret',
      attribute: 'secret',
      message: `The secret of <signature scheme="${scheme}"> is empty or only whitespace: set it to the secret the sender shows.`,
    });
    return null;
  }
  if (scheme !== 'standard') return Buffer.from(secret, 'utf8');
  const key = decodeStandardSecret(secret);
  if (key === null) {
    problems.push({
      code: 'invalid-signature-secret',
      attribute: 'secret',
      message: `The secret of <signature scheme="standard"> is not "whsec_" followed by base64: copy the signing secret exactly as the sender shows it.`,
    });
  }
  return key;
}
