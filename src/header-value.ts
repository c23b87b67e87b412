// What node:http lets into an outgoing header value. HttpRequest tasks are sent by got, which
// hands their headers to node:http; a value it refuses fails the task at send time, after the
// request's earlier tasks have run. Preparation asks the very same function first.

import { validateHeaderValue } from 'node:http';

/**
 * node:http's own class of refused characters (checkInvalidHeaderChar): anything but TAB,
 * printable ASCII and U+0080-U+00FF. Used only to say where the refused character stands; the
 * verdict is node's (test/template/header-value.test.ts holds the two to the same answer).
 */
const REFUSED = /[^\t\x20-\x7e\x80-\xff]/;

/** Where the first character node:http would refuse stands in `value`; -1 when it would send it. */
export function refusedHeaderCharacter(value: string): number {
  try {
    validateHeaderValue('x-checked', value);
    return -1;
  } catch {
    return REFUSED.exec(value)?.index ?? 0;
  }
}
