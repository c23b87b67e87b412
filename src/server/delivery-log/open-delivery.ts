// What the delivery log learns of a request while it runs (recording.ts), kept on its
// response: the steps that learn it (a refusal, the runtime's answer, a task) need no other
// handle on the log.

import type { TaskRecord } from '../../deliveries/record.js';

/** What is learnt of a delivery while its request runs. */
export class OpenDelivery {
  /** The problem's detail as answered (../write-response.ts). */
  reason: string | null = null;
  classified: 'spam' | 'duplicate' | 'handshake' | null = null;
  deduplicationKey: string | null = null;
  job: string | null = null;
  /** Outcomes reported before the answer. */
  tasks: TaskRecord[] | null = null;
  /** The body as received, while it arrives; null: not captured (no body read, or not kept). */
  body: Buffer[] | null = null;
  bodyBytes = 0;

  constructor(
    readonly receivedAt: number,
    public replayOf: string | null,
  ) {}
}
