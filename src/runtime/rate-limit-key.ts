// The key a `<rate-limit by="parameter:NAME">` counts a request under. The raw value would give
// every spelling of one address its own limit (`A@x.com`, ` a@x.com`, `<a@x.com>`, `a@x.com.`),
// so a client could keep mailing one person by varying it. The rule (docs/behaviour.md,
// "Public forms"): the value is trimmed; when it is exactly one email address as
// `format="email"` reads it (display name and angle brackets allowed), the key is that address,
// lower-cased (local part too: no mail provider tells `Ada@` from `ada@`, and one count too many
// is the safe side for a limit) and without trailing dots; any other value is keyed as trimmed.

import { parseOneAddress } from '../email-address.js';

export function rateLimitKey(value: string): string {
  const trimmed = value.trim();
  if (!trimmed.includes('@')) return trimmed;
  // Trailing dots first: the address reader refuses a domain that ends in one.
  const mailbox = parseOneAddress(trimmed.replace(/\.+$/, ''));
  if (mailbox === null) return trimmed;
  return mailbox.address.toLowerCase();
}
