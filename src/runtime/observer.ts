// What the task engine reports; the server turns it into log lines and metrics. Keeping it an
// interface lets runtime and tasks stay independent of logging and node:http.

import type { TaskErrorCode } from '../tasks/errors.js';

export type TaskOutcome = 'succeeded' | 'failed' | 'ignored-failure' | 'skipped' | 'not-started';

export interface TaskOutcomeEvent {
  readonly requestId: string;
  readonly endpoint: string;
  readonly taskId: string;
  /** The kind's registry name: `http-request`, `email`. */
  readonly kind: string;
  readonly outcome: TaskOutcome;
  readonly durationMs: number;
  readonly attempts: number;
  /** Internal reason of a failure or of a task not run: for logs only, never for a client. */
  readonly error?: string;
  /** The failure's code (tasks/errors.ts), when the task failed. */
  readonly code?: TaskErrorCode;
  /** The upstream's HTTP status of the last attempt, for a kind that makes requests. */
  readonly status?: number;
}

export interface RuntimeObserver {
  taskFinished(event: TaskOutcomeEvent): void;
  /** Anything worth a log line that is not a task outcome (e.g. a background failure). */
  warn(message: string, fields?: Record<string, unknown>): void;
}

export const silentObserver: RuntimeObserver = {
  taskFinished() {},
  warn() {},
};
