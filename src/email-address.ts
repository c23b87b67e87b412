// What counts as one email address: the rule of the mail tasks (a header value must name exactly
// one mailbox, so request data cannot add recipients) and of format="email" on a parameter, so a
// value the parameter accepts is a value the mail task accepts. Preparation and delivery both
// ask this module, so a value that passes preparation is one delivery takes as it is.

import addressparser from 'nodemailer/lib/addressparser/index.js';

export interface Mailbox {
  readonly name: string;
  readonly address: string;
}

export type AddressReading = { readonly ok: true; readonly mailbox: Mailbox } | { readonly ok: false; readonly reason: string };

/**
 * Line breaks, control characters (NUL, DEL, the C1 range with U+0085), invisible format
 * characters (U+200B, U+2060, U+00AD, bidi controls) and the Unicode line and paragraph
 * separators: addressparser drops some of them silently (a NUL vanishes and the mail goes to
 * another address than the one checked), mail servers refuse others.
 */
const CONTROL_OR_INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
/** RFC 5322 atext, and (RFC 6531) any other non-ASCII character; whitespace is refused apart. */
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-\\u0080-\\u{10FFFF}]+";
const LOCAL_PART = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`, 'u');
const LABEL = '[\\p{L}\\p{N}\\p{M}](?:[\\p{L}\\p{N}\\p{M}-]*[\\p{L}\\p{N}\\p{M}])?';
const DOMAIN = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`, 'u');
const ADDRESS_LITERAL = /^\[[\x21-\x5a\x5e-\x7e]+\]$/;

/** The one mailbox in `value`, or why it is not exactly one (a predicate without the value, safe to tell a client). */
export function readOneAddress(value: string): AddressReading {
  if (/[\r\n]/.test(value)) return refused('contains a line break');
  if (CONTROL_OR_INVISIBLE.test(value)) return refused('contains a control or invisible character');
  // A comment ("a@x (Evil Name)") is shown by mail programs as the sender's or recipient's name.
  if (/[()]/.test(withoutQuotedStrings(value))) return refused('holds a comment in parentheses');
  const parsed = addressparser(value);
  if (parsed.length > 1 || addressparser(value, { flatten: true }).length > 1) return refused('holds several email addresses');
  const only = parsed.length === 1 ? parsed[0]! : null;
  if (only === null || !('address' in only) || typeof only.address !== 'string') return refused('is not one email address');
  if (!isAddress(only.address)) return refused('is not one email address');
  // Mail programs show the name instead of the address: a name that holds an address shows
  // another address than the one mailed, and an encoded word (RFC 2047, `=?utf-8?q?…?=`) is decoded
  // into any text, such an address included.
  if (only.name.includes('@')) return refused('has a display name that holds an email address');
  if (only.name.includes('=?')) return refused('has an encoded display name');
  return { ok: true, mailbox: { name: only.name, address: only.address } };
}

/** The one mailbox in `value`, or null when it holds none, several, a group, a comment, a line break or a control character. */
export function parseOneAddress(value: string): Mailbox | null {
  const reading = readOneAddress(value);
  return reading.ok ? reading.mailbox : null;
}

/** local@domain as SMTP takes it: addressparser takes any word for an address. */
function isAddress(address: string): boolean {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1 || /\s/u.test(address)) return false;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  return LOCAL_PART.test(local) && (DOMAIN.test(domain) || ADDRESS_LITERAL.test(domain));
}

/** `"a (b)" <c@d>` holds no comment: parentheses inside a quoted name are text. */
function withoutQuotedStrings(value: string): string {
  return value.replace(/"(?:[^"\\]|\\.)*"/g, '""');
}

function refused(reason: string): AddressReading {
  return { ok: false, reason };
}
