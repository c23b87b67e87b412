// What counts as one email address: the rule of the mail tasks (a header value must name exactly
// one mailbox, so request data cannot add recipients) and of format="email" on a parameter, so a
// value the parameter accepts is a value the mail task accepts.

import addressparser from 'nodemailer/lib/addressparser/index.js';

export interface Mailbox {
  readonly name: string;
  readonly address: string;
}

/** The one mailbox in `value`, or null when it holds none, several, a group, or a line break. */
export function parseOneAddress(value: string): Mailbox | null {
  if (/[\r\n]/.test(value)) return null;
  const parsed = addressparser(value);
  const only = parsed.length === 1 ? parsed[0]! : null;
  if (only === null || !('address' in only) || typeof only.address !== 'string') return null;
  const address = only.address;
  // addressparser takes any word for an address; an address has a local part and a domain.
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1 || /\s/.test(address)) return null;
  return { name: only.name, address };
}
