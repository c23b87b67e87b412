// The generic schemes' attributes (docs/language.md, "<signature>"): `hmac`, `ed25519` and
// `ecdsa-p256` say with attributes what a named sender's entry says as data (senders.ts), and end
// in the same SignatureSpec. Every problem is reported at once, at its attribute; the spec is
// returned all the same, with defaults in place of what was wrong, so the key is checked too.

import { JSON_SOURCE, jsonPointer } from './refusal.js';
import type { HeaderSet, SignatureSpec } from './senders.js';
import {
  HEADER_EXPECTED,
  PROPERTY,
  invalid,
  missingHeader,
  notForScheme,
  type OptionalAttribute,
  type SignatureAttributes,
  type SignatureProblem,
  type Suggest,
} from './signature-attributes.js';
import { DIGEST_ENCODINGS, HMAC_ALGORITHMS, TIMESTAMP_FORMATS } from './signature-terms.js';
import { FIELD_NAME, parseSignedTemplate, uses } from './signed-template.js';

const SEPARATORS = [',', ';'] as const;
/** A header name, or `json:` and a JSON pointer (a field of the body, as Mailgun signs). */
function isSource(name: string): boolean {
  return FIELD_NAME.test(name) || (name.startsWith(JSON_SOURCE) && jsonPointer(name.slice(JSON_SOURCE.length)) !== null);
}

// The name of a field of a structured header: `v1`, `t`, `ts`, `h1`.
const FIELD_KEY = /^[A-Za-z0-9_.-]+$/;

export function readGenericSpec(scheme: string, attributes: SignatureAttributes, problems: SignatureProblem[], suggest: Suggest): SignatureSpec {
  const verify = scheme === 'hmac' ? 'hmac' : scheme === 'ed25519' ? 'ed25519' : 'ecdsa-p256';
  const given = (attribute: OptionalAttribute) => {
    const value = attributes[PROPERTY[attribute]];
    return value === undefined ? undefined : value.trim();
  };
  const timed = given('timestamp-header') !== undefined || given('timestamp-field') !== undefined;
  if (verify !== 'hmac' && given('algorithm') !== undefined) problems.push(notForScheme('algorithm', scheme, 'its digest is fixed by the key type'));
  for (const attribute of ['tolerance', 'timestamp-format'] as const) {
    if (!timed && given(attribute) !== undefined)
      problems.push(notForScheme(attribute, scheme, 'no timestamp is read: add timestamp-header or timestamp-field'));
  }
  const header = given('header');
  if (header === undefined) problems.push(missingHeader(scheme, 'signature'));
  for (const attribute of ['header', 'timestamp-header', 'id-header'] as const) {
    const name = given(attribute);
    if (name !== undefined && !isSource(name)) problems.push(invalid(attribute, name, `${HEADER_EXPECTED}, or json: and a JSON pointer into the body`));
  }
  const algorithm = verify === 'hmac' ? pick(given('algorithm'), HMAC_ALGORITHMS, 'algorithm', problems) : undefined;
  const encoding = pick(given('encoding'), DIGEST_ENCODINGS, 'encoding', problems) ?? 'hex';
  const timestampFormat = timed ? pick(given('timestamp-format'), TIMESTAMP_FORMATS, 'timestamp-format', problems) : undefined;
  const fields = readFields(given('signature-field'), given('timestamp-field'), given('timestamp-header'), problems);
  if (fields.field === undefined && given('separator') !== undefined)
    problems.push(notForScheme('separator', scheme, 'it separates the fields of signature-field'));
  const separator = fields.field === undefined ? undefined : pick(given('separator'), SEPARATORS, 'separator', problems);
  const signed = attributes.signed ?? '{body}';
  checkTemplate(signed, { timed, id: given('id-header') !== undefined }, problems, suggest);
  const set: HeaderSet = {
    signature: header ?? '',
    ...(given('timestamp-header') === undefined ? {} : { timestamp: given('timestamp-header')! }),
    ...(given('id-header') === undefined ? {} : { id: given('id-header')! }),
  };
  return {
    verify,
    ...(algorithm === undefined ? {} : { algorithm }),
    headers: [set],
    prefix: attributes.prefix ?? '',
    ...fields,
    ...(separator === undefined ? {} : { separator }),
    encoding,
    ...(timestampFormat === undefined ? {} : { timestampFormat }),
    signed,
  };
}

/** signature-field and timestamp-field: names of fields of one structured header, the timestamp's only beside a signature's. */
function readFields(
  signatureField: string | undefined,
  timestampField: string | undefined,
  timestampHeader: string | undefined,
  problems: SignatureProblem[],
): Pick<SignatureSpec, 'field' | 'timestampField'> {
  for (const [attribute, value] of [
    ['signature-field', signatureField],
    ['timestamp-field', timestampField],
  ] as const) {
    if (value !== undefined && !FIELD_KEY.test(value)) problems.push(invalid(attribute, value, 'the name of a field of the header, such as v1 or t'));
  }
  if (timestampField !== undefined && signatureField === undefined)
    problems.push(
      invalid('timestamp-field', timestampField, 'a field beside signature-field in the same header; a timestamp in a header of its own is timestamp-header'),
    );
  if (timestampField !== undefined && timestampHeader !== undefined)
    problems.push(invalid('timestamp-field', timestampField, 'either timestamp-field or timestamp-header, not both'));
  return { ...(signatureField === undefined ? {} : { field: signatureField }), ...(timestampField === undefined ? {} : { timestampField }) };
}

/**
 * The template parses, and uses what is read and reads what it uses: {timestamp} needs a
 * timestamp, {id} an id-header, and a timestamp that is read but not signed would prove nothing.
 */
function checkTemplate(signed: string, has: { readonly timed: boolean; readonly id: boolean }, problems: SignatureProblem[], suggest: Suggest): void {
  const parsed = parseSignedTemplate(signed, suggest);
  const problem = (message: string) => problems.push({ code: 'invalid-signed-template', attribute: 'signed', message });
  if (!parsed.ok) return void problem(parsed.message);
  if (uses(parsed.parts, 'timestamp') && !has.timed) problem('{timestamp} is signed, but no timestamp is read: add timestamp-header or timestamp-field');
  if (!uses(parsed.parts, 'timestamp') && has.timed)
    problem('a timestamp is read but not signed, so it proves nothing: add {timestamp} where the sender signs it');
  if (uses(parsed.parts, 'id') && !has.id) problem('{id} is signed, but no id is read: add id-header');
}

/** An `algorithm`, `encoding` or `timestamp-format` from its domain; undefined when absent or reported. */
function pick<T extends string>(value: string | undefined, allowed: readonly T[], attribute: OptionalAttribute, problems: SignatureProblem[]): T | undefined {
  if (value === undefined) return undefined;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  problems.push(invalid(attribute, value, allowed.join(' or ')));
  return undefined;
}
