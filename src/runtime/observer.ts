// What the task engine reports; the server turns it into log lines and metrics. Keeping it an
// interface lets runtime and tasks stay independent of logging and node:http.

import type { TaskKind } from '../compiler/ast.js';

export type TaskOutcome = 'succeeded' | 'failed' | 'ignored-failure' | 'skipped' | 'not-started';

export interface TaskOutcomeEvent {
  readonly requestId: string;
  readonly endpoint: string;
  readonly taskId: string;
  readonly kind: TaskKind;
  readonly outcome: TaskOutcome;
  readonly durationMs: number;
  readonly attempts: number;
  /** Internal reason of a failure: for logs only, never for a client. */
  readonly error?: string;
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
