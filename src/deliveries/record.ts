// One delivery: a request routed to an endpoint, whatever became of it (docs/deliveries.md).
// The JSON shape of `deliveries show --format json`: its field names are a contract.

/** What the service made of the request, exactly one per delivery. */
export const VERDICTS = ['accepted', 'refused', 'spam', 'limited', 'duplicate', 'failed', 'handshake'] as const;
export type Verdict = (typeof VERDICTS)[number];

export const TASK_STATES = ['pending', 'running', 'succeeded', 'failed', 'skipped', 'not-started', 'delivery-unknown'] as const;
export type TaskState = (typeof TASK_STATES)[number];

export interface TaskRecord {
  readonly id: string;
  /** The kind's registry name: `http-request`, `email`. */
  readonly kind: string;
  readonly state: TaskState;
  readonly attempts: number;
  /** The upstream's last HTTP status, when the task made a request; null otherwise. */
  readonly status: number | null;
  /** What failed, naming the task and the cause, never a value; null unless it failed. */
  readonly error: string | null;
  readonly durationMs: number | null;
}

export interface DeliveryRecord {
  /** The request id: the answer's x-request-id. */
  readonly id: string;
  /** ISO 8601, UTC, milliseconds. */
  readonly receivedAt: string;
  readonly endpoint: string;
  readonly method: string;
  readonly path: string;
  readonly client: string;
  readonly verdict: Verdict;
  readonly status: number;
  /** The problem's detail as answered; null for an answer that is not a problem. */
  readonly reason: string | null;
  readonly durationMs: number;
  readonly deduplicationKey: string | null;
  /** The delivery this one replays: a deduplication replay's first delivery, or the one `deliveries replay` sent again. */
  readonly replayOf: string | null;
  /** The queue job of a background run, when one was stored. */
  readonly job: string | null;
  readonly tasks: readonly TaskRecord[];
  /** Whether the request (headers and raw body) is kept, sealed. */
  readonly request: 'sealed' | 'not-kept';
}

/** The received request as a replay resends it and `--reveal` prints it. */
export interface KeptRequest {
  readonly method: string;
  /** The path and query as received. */
  readonly url: string;
  /** Raw header pairs, in the order received. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
}
