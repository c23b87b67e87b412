// <deduplicate> keys with --workers N and no Redis: the primary holds the one record
// (records.ts) and each worker asks it over the cluster's IPC channel, so no two
// workers can both run one key. Every operation is answered, completions and releases too: a
// worker answers its client only once the primary has taken the outcome, so the client's next
// request, on whichever worker, sees it.

import type { Worker } from 'node:cluster';
import type { Claim, RememberedAnswer } from '../../runtime/deduplication.js';
import type { DeduplicationRecords } from './records.js';

const REQUEST = 'endpoint-service:dedup';
const ANSWER = 'endpoint-service:dedup-answer';
/** Longest wait for the primary: one that cannot answer by then counts as a store that is down. */
const ANSWER_TIMEOUT_MS = 1000;

type Operation =
  | { readonly op: 'claim'; readonly id: string; readonly fingerprint: string; readonly leaseMs: number }
  | { readonly op: 'renew'; readonly id: string; readonly token: string; readonly leaseMs: number }
  | {
      readonly op: 'complete';
      readonly id: string;
      readonly token: string;
      readonly fingerprint: string;
      readonly answer: RememberedAnswer;
      readonly forMs: number;
    }
  | { readonly op: 'release'; readonly id: string; readonly token: string }
  | { readonly op: 'remember'; readonly id: string; readonly fingerprint: string; readonly answer: RememberedAnswer; readonly forMs: number };

interface RequestMessage {
  readonly type: typeof REQUEST;
  readonly seq: number;
  readonly operation: Operation;
}
interface AnswerMessage {
  readonly type: typeof ANSWER;
  readonly seq: number;
  readonly claim: Claim | null;
  /** Remembered answers the operation evicted (records.ts), counted by the worker that asked. */
  readonly evicted: number;
}

export interface PrimaryAnswer {
  readonly claim: Claim | null;
  readonly evicted: number;
}

/** In the primary: answers a worker's message when it is one of these; false otherwise. */
export function answerDeduplication(records: DeduplicationRecords, worker: Worker, message: unknown): boolean {
  if ((message as { type?: unknown } | null)?.type !== REQUEST) return false;
  const { seq, operation } = message as RequestMessage;
  const evictionsBefore = records.evictions;
  let claim: Claim | null = null;
  switch (operation.op) {
    case 'claim':
      claim = records.claim(operation.id, operation.fingerprint, operation.leaseMs);
      break;
    case 'renew':
      records.renew(operation.id, operation.token, operation.leaseMs);
      break;
    case 'complete':
      records.complete(operation.id, operation.token, operation.fingerprint, operation.answer, operation.forMs);
      break;
    case 'release':
      records.release(operation.id, operation.token);
      break;
    case 'remember':
      claim = records.remember(operation.id, operation.fingerprint, operation.answer, operation.forMs);
      break;
  }
  if (worker.isConnected()) worker.send({ type: ANSWER, seq, claim, evicted: records.evictions - evictionsBefore } satisfies AnswerMessage);
  return true;
}

/** In a worker: the primary's record, asked over IPC. Rejects when the primary does not answer in time. */
export class PrimaryRecords {
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (answer: PrimaryAnswer) => void; timer: NodeJS.Timeout }>();

  constructor() {
    process.on('message', (message: unknown) => {
      if ((message as { type?: unknown } | null)?.type !== ANSWER) return;
      const { seq, claim, evicted } = message as AnswerMessage;
      const waiting = this.pending.get(seq);
      if (waiting === undefined) return;
      this.pending.delete(seq);
      clearTimeout(waiting.timer);
      waiting.resolve({ claim, evicted: evicted ?? 0 });
    });
  }

  ask(operation: Operation): Promise<PrimaryAnswer> {
    return new Promise((resolve, reject) => {
      const seq = ++this.seq;
      const timer = setTimeout(() => {
        this.pending.delete(seq);
        reject(new Error(`the primary process did not answer within ${ANSWER_TIMEOUT_MS} ms`));
      }, ANSWER_TIMEOUT_MS);
      this.pending.set(seq, { resolve, timer });
      const sent = process.send?.({ type: REQUEST, seq, operation } satisfies RequestMessage);
      if (sent !== true && process.send === undefined) {
        this.pending.delete(seq);
        clearTimeout(timer);
        reject(new Error('no primary process to ask'));
      }
    });
  }
}
