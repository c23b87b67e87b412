// Request ids (x-request-id, ${request-id}, the delivery log's id) are UUIDs of version 7 (RFC
// 9562): the time of arrival in milliseconds, a counter, then random bits. Ids that grow with time
// are written at the end of the delivery log's index on id, where random ones would each touch a
// page of their own: in SQLite the difference is most of what keeping a delivery costs. The
// counter (RFC 9562, 6.2, method 1) keeps a process's ids in the order its requests arrived
// within one millisecond too, which is the delivery log's order among deliveries of the same
// millisecond.

import { randomUUID } from 'node:crypto';

/** The counter's 12 bits; each millisecond it starts at random below half of them, so that it rarely runs out. */
const COUNTER_MAX = 0xfff;
const COUNTER_START = 0x800;

let lastMs = -1;
let counter = 0;
let prefix = '';

/**
 * A version 7 UUID: 48 bits of Unix milliseconds, the version, a 12-bit counter, and a version 4
 * UUID's variant and 62 random bits. Never lower than the one before: a counter that ran out, or a
 * clock set back, carries on from the last millisecond used.
 */
export function newRequestId(now: number = Date.now()): string {
  if (now > lastMs) {
    setMs(now);
  } else if (++counter > COUNTER_MAX) {
    setMs(lastMs + 1);
  }
  // randomUUID() is xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: from its 19th character on, the variant and 62 random bits.
  return prefix + counter.toString(16).padStart(3, '0') + randomUUID().slice(18);
}

function setMs(ms: number): void {
  const time = ms.toString(16).padStart(12, '0');
  prefix = `${time.slice(0, 8)}-${time.slice(8)}-7`;
  lastMs = ms;
  counter = Math.floor(Math.random() * COUNTER_START);
}
