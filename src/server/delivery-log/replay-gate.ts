// How serve tells a delivery it sends again from the log (replays.ts) from any other request: a
// header carrying a mark derived from the log's sealing key, which every process of the
// deployment holds and no client does. The mark never leaves the machine (the replay goes to
// the service's own listening address) and is never kept: the recorded headers leave it out.

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { QueueKey } from '../../queue/seal.js';

export const REPLAY_HEADER = 'x-endpoint-service-replay';

export class ReplayGate {
  private readonly mark: Buffer;

  constructor(key: QueueKey) {
    this.mark = createHmac('sha256', key.key).update('endpoint-service delivery replay').digest();
  }

  /** The header's value for a replay of `delivery`. */
  header(delivery: string): string {
    return `${this.mark.toString('hex')} ${delivery}`;
  }

  /** The delivery a request replays, when it carries the right mark; null for any other request. */
  admit(request: IncomingMessage): string | null {
    const value = request.headers[REPLAY_HEADER];
    if (typeof value !== 'string') return null;
    const space = value.indexOf(' ');
    if (space !== 64) return null;
    const given = Buffer.from(value.slice(0, space), 'hex');
    if (given.length !== this.mark.length || !timingSafeEqual(given, this.mark)) return null;
    return value.slice(space + 1);
  }
}
