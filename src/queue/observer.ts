// What the queue reports; the server turns it into log lines and metrics (as runtime/observer.ts
// does for tasks). Every job event carries requestId, endpoint, jobId and attempt.

export type EnqueueOutcome = 'queued' | 'refused' | 'in-process';
/** `void`: the store took the job after serve had answered its request without it; nothing ran. */
export type RunOutcome = 'completed' | 'retrying' | 'failed' | 'interrupted' | 'config-changed' | 'void';

export interface JobFields {
  readonly requestId: string;
  readonly endpoint: string;
  readonly jobId: string;
  readonly attempt: number;
}

export interface QueueObserver {
  log(level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void;
  enqueued(endpoint: string, outcome: EnqueueOutcome, seconds: number): void;
  /** A job started: `waitSeconds` from enqueue to its first start (null on later attempts). */
  started(job: JobFields, waitSeconds: number | null): void;
  finished(job: JobFields, outcome: RunOutcome): void;
  deliveryUnknown(job: JobFields, task: string): void;
  /** The store answers (true) or does not (false). */
  storeUp(up: boolean): void;
}
