// The attributes of a `<signature>` element as describeSignature reads them, and the problems it
// reports (docs/language.md, "<signature>"): shared by the named senders' path
// (describe-signature.ts) and the generic schemes' (describe-generic.ts).

import type { SignatureDescription } from './signature-description.js';

/** The attributes as written; absent ones undefined. `secret` and `publicKey` are their templates' expansions. */
export interface SignatureAttributes {
  readonly scheme: string;
  readonly secret?: string | undefined;
  readonly publicKey?: string | undefined;
  readonly header?: string | undefined;
  readonly algorithm?: string | undefined;
  readonly encoding?: string | undefined;
  readonly prefix?: string | undefined;
  readonly tolerance?: string | undefined;
  readonly signed?: string | undefined;
  readonly timestampHeader?: string | undefined;
  readonly idHeader?: string | undefined;
  readonly signatureField?: string | undefined;
  readonly timestampField?: string | undefined;
  readonly timestampFormat?: string | undefined;
  readonly separator?: string | undefined;
}

/** The attributes a scheme may be given besides `scheme` and its key, as written in the file. */
export const OPTIONAL_ATTRIBUTES = [
  'header',
  'algorithm',
  'encoding',
  'prefix',
  'tolerance',
  'signed',
  'timestamp-header',
  'id-header',
  'signature-field',
  'timestamp-field',
  'timestamp-format',
  'separator',
] as const;
export type OptionalAttribute = (typeof OPTIONAL_ATTRIBUTES)[number];
export type KeyAttribute = 'secret' | 'public-key';

/** Where each attribute is found in SignatureAttributes. */
export const PROPERTY: Readonly<Record<OptionalAttribute | KeyAttribute, keyof SignatureAttributes>> = {
  header: 'header',
  algorithm: 'algorithm',
  encoding: 'encoding',
  prefix: 'prefix',
  tolerance: 'tolerance',
  signed: 'signed',
  'timestamp-header': 'timestampHeader',
  'id-header': 'idHeader',
  'signature-field': 'signatureField',
  'timestamp-field': 'timestampField',
  'timestamp-format': 'timestampFormat',
  separator: 'separator',
  secret: 'secret',
  'public-key': 'publicKey',
};

export type SignatureProblem =
  | {
      readonly code: 'unknown-signature-scheme';
      readonly attribute: 'scheme';
      readonly scheme: string;
      readonly suggestion: string | undefined;
      readonly message: string;
    }
  | { readonly code: 'missing-attribute'; readonly attribute: 'header' | KeyAttribute; readonly element: 'signature'; readonly message: string }
  | { readonly code: 'attribute-not-for-scheme'; readonly attribute: OptionalAttribute | KeyAttribute; readonly scheme: string; readonly message: string }
  | {
      readonly code: 'invalid-value';
      readonly attribute: OptionalAttribute;
      readonly value: string;
      readonly expected: string;
      readonly message: string;
    }
  | { readonly code: 'invalid-signature-secret'; readonly attribute: 'secret'; readonly message: string }
  | { readonly code: 'invalid-public-key'; readonly attribute: 'public-key'; readonly message: string }
  | { readonly code: 'invalid-signed-template'; readonly attribute: 'signed'; readonly message: string };

export type SignatureOutcome =
  { readonly ok: true; readonly signature: SignatureDescription } | { readonly ok: false; readonly problems: readonly SignatureProblem[] };

/** "Did you mean": the compiler passes its per-compile Suggestions (src/compiler/suggest.ts), which keeps its budget. */
export type Suggest = (name: string, candidates: readonly string[]) => string | undefined;

export const HEADER_EXPECTED = "a header name (letters, digits and !#$%&'*+-.^_`|~, no spaces or colon)";

export function missingHeader(scheme: string, what: string): SignatureProblem {
  return {
    code: 'missing-attribute',
    attribute: 'header',
    element: 'signature',
    message: `<signature scheme="${scheme}"> needs a "header" attribute: the request header that carries the ${what}.`,
  };
}

export function invalid(attribute: OptionalAttribute, value: string, expected: string): SignatureProblem {
  return { code: 'invalid-value', attribute, value, expected, message: `"${value}" is not a valid value for ${attribute}: expected ${expected}.` };
}

export function notForScheme(attribute: OptionalAttribute | KeyAttribute, scheme: string, why: string): SignatureProblem {
  return {
    code: 'attribute-not-for-scheme',
    attribute,
    scheme,
    message: `"${attribute}" does not apply to <signature scheme="${scheme}">: ${why}. Remove it.`,
  };
}
