// Every task kind fails with a TaskError: a code a dashboard can count, whether trying again
// could help, how long the other side asked us to wait, and how many attempts were made. The
// message is for logs only: it may name hosts, never a client.

export type TaskErrorCode =
  /** The upstream answered with a status outside 2xx. */
  | 'http-status'
  /** No complete answer (or no SMTP acceptance) within the task's timeout. */
  | 'timeout'
  /** The connection failed or broke: refused, reset, DNS, unreachable. */
  | 'connection'
  /** The answer was larger than the service reads. */
  | 'response-too-large'
  | 'too-many-redirects'
  /** A redirect to another origin (scheme, host or port) that --allow-task-host does not name: not followed. */
  | 'cross-origin-redirect'
  /** serve --allow-task-host refused the host, before any connection. */
  | 'host-not-allowed'
  /** The expanded request cannot be sent: an invalid URL, an unsupported scheme. */
  | 'invalid-request'
  /** A value from the request or a template cannot be used: a line break in a header, a missing value, not one address. */
  | 'invalid-value'
  /** An output intermediate value could not be read from the answer. */
  | 'output'
  /** The task's condition could not be evaluated. */
  | 'condition'
  /** The SMTP server refused the message or a recipient. */
  | 'smtp-rejected'
  /** No SMTP server is configured, or the configuration cannot be used. */
  | 'smtp-not-configured'
  /** The service is shutting down and its connections are closed. */
  | 'shutting-down'
  /** Anything else: a bug of the service rather than of the configuration or the peer. */
  | 'internal';

export interface TaskErrorOptions {
  readonly code: TaskErrorCode;
  /** Trying again could succeed (a timeout, a 503, a reset connection). */
  readonly transient?: boolean;
  /** What the peer asked for (Retry-After), when it did. */
  readonly retryAfterMs?: number | null;
  readonly attempts?: number;
  readonly cause?: unknown;
}

export class TaskError extends Error {
  override readonly name = 'TaskError';
  readonly code: TaskErrorCode;
  readonly transient: boolean;
  readonly retryAfterMs: number | null;
  readonly attempts: number;

  constructor(message: string, options: TaskErrorOptions) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.code = options.code;
    this.transient = options.transient ?? false;
    this.retryAfterMs = options.retryAfterMs ?? null;
    this.attempts = options.attempts ?? 0;
  }

  /** The same failure, counted after `attempts` attempts. */
  withAttempts(attempts: number, message: string = this.message): TaskError {
    return new TaskError(message, { code: this.code, transient: this.transient, retryAfterMs: this.retryAfterMs, attempts, cause: this.cause });
  }
}

/** Any error as a TaskError: a TaskError as it is, anything else with `fallback` as its code. */
export function toTaskError(error: unknown, fallback: TaskErrorCode = 'internal'): TaskError {
  if (error instanceof TaskError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new TaskError(message, { code: fallback, cause: error });
}
