// Request ids (x-request-id, ${request-id}, the delivery log's id) are UUIDs of version 7 (RFC
// 9562): the time of arrival in milliseconds, then random bits. Ids that grow with time are
// written at the end of the delivery log's index on id, where random ones would each touch a page
// of their own: in SQLite the difference is most of what keeping a delivery costs.

import { randomUUID } from 'node:crypto';

let prefixMs = -1;
let prefix = '';

/** A version 7 UUID: 48 bits of Unix milliseconds, the version, and a version 4 UUID's random bits and variant. */
export function newRequestId(now: number = Date.now()): string {
  if (now !== prefixMs) {
    const time = now.toString(16).padStart(12, '0');
    prefix = `${time.slice(0, 8)}-${time.slice(8)}-7`;
    prefixMs = now;
  }
  // randomUUID() is xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: from its 16th character on, 12 random bits, the variant and 62 more.
  return prefix + randomUUID().slice(15);
}
