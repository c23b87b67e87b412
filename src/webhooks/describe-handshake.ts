// From the attributes of a `<handshake>` element to its HandshakeDescription, or to the problems
// that stop it (docs/language.md, "<handshake>"). Compile-time and pure, like describeSignature:
// Zoom's answer needs its secret token and Meta's check its verify token, so each is required
// there and refused where it means nothing. Problems carry their diagnostic code:
// `unknown-handshake-scheme` is this element's own; `missing-attribute`, `invalid-value` and
// `attribute-not-for-scheme` are shared with `<signature>`.

import { createSecretKey } from 'node:crypto';
import { tokenDigest } from './digest.js';
import type { Suggest } from './describe-signature.js';
import { HANDSHAKE_SCHEMES, type HandshakeDescription, type HandshakeScheme } from './handshake.js';

/** The attributes as written; absent ones undefined; `secret` and `verifyToken` are their templates' expansions. */
export interface HandshakeAttributes {
  readonly scheme: string;
  readonly secret?: string | undefined;
  readonly verifyToken?: string | undefined;
}

type SecretAttribute = 'secret' | 'verify-token';

export type HandshakeProblem =
  | {
      readonly code: 'unknown-handshake-scheme';
      readonly attribute: 'scheme';
      readonly scheme: string;
      readonly suggestion: string | undefined;
      readonly message: string;
    }
  | { readonly code: 'missing-attribute'; readonly attribute: SecretAttribute; readonly element: 'handshake'; readonly message: string }
  | { readonly code: 'attribute-not-for-scheme'; readonly attribute: SecretAttribute; readonly scheme: HandshakeScheme; readonly message: string }
  /** Only ever for an empty value, so the message quotes nothing secret. */
  | { readonly code: 'invalid-value'; readonly attribute: SecretAttribute; readonly value: ''; readonly expected: string; readonly message: string };

export type HandshakeOutcome =
  { readonly ok: true; readonly handshake: HandshakeDescription } | { readonly ok: false; readonly problems: readonly HandshakeProblem[] };

/** Which secret attribute each scheme needs, if any. */
const NEEDS: Readonly<Record<HandshakeScheme, SecretAttribute | null>> = { slack: null, zoom: 'secret', meta: 'verify-token', graph: null };

export function describeHandshake(attributes: HandshakeAttributes, suggest: Suggest): HandshakeOutcome {
  const scheme = attributes.scheme.trim();
  if (!(HANDSHAKE_SCHEMES as readonly string[]).includes(scheme)) {
    const suggestion = suggest(scheme, HANDSHAKE_SCHEMES);
    const hint = suggestion === undefined ? ` Use one of ${HANDSHAKE_SCHEMES.join(', ')}.` : ` Did you mean "${suggestion}"?`;
    return {
      ok: false,
      problems: [{ code: 'unknown-handshake-scheme', attribute: 'scheme', scheme, suggestion, message: `Unknown handshake scheme "${scheme}".${hint}` }],
    };
  }
  const known = scheme as HandshakeScheme;
  const needed = NEEDS[known];
  const values: Readonly<Record<SecretAttribute, string | undefined>> = { secret: attributes.secret, 'verify-token': attributes.verifyToken };
  const problems: HandshakeProblem[] = [];
  for (const attribute of ['secret', 'verify-token'] as const) {
    const value = values[attribute];
    if (attribute !== needed) {
      if (value !== undefined)
        problems.push({
          code: 'attribute-not-for-scheme',
          attribute,
          scheme: known,
          message: `"${attribute}" does not apply to <handshake scheme="${known}">${why(known)}. Remove it.`,
        });
    } else if (value === undefined) {
      problems.push({
        code: 'missing-attribute',
        attribute,
        element: 'handshake',
        message: `<handshake scheme="${known}"> needs a "${attribute}" attribute: ${purpose(known)}.`,
      });
    } else if (value.trim().length === 0) {
      problems.push({
        code: 'invalid-value',
        attribute,
        value: '',
        expected: 'a non-empty value',
        message: `The ${attribute} of <handshake scheme="${known}"> is empty or only whitespace: ${purpose(known)}.`,
      });
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  switch (known) {
    case 'slack':
    case 'graph':
      return { ok: true, handshake: { scheme: known } };
    case 'zoom':
      return { ok: true, handshake: { scheme: 'zoom', key: createSecretKey(Buffer.from(attributes.secret!, 'utf8')) } };
    case 'meta':
      return { ok: true, handshake: { scheme: 'meta', verifyTokenDigest: tokenDigest(attributes.verifyToken!) } };
  }
}

function why(scheme: HandshakeScheme): string {
  if (scheme === 'slack') return ': Slack\'s challenge is answered as it is (its signing secret belongs on <signature scheme="slack">)';
  if (scheme === 'graph') return ': the validation token is answered as it is';
  return scheme === 'zoom' ? ': Zoom answers with its secret token' : ': Meta checks its verify token';
}

function purpose(scheme: HandshakeScheme): string {
  return scheme === 'zoom'
    ? "Zoom's secret token, which signs the answer to its URL validation"
    : 'the verify token entered in the Meta app dashboard, which the subscription request must carry';
}
