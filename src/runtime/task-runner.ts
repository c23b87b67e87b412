// CONTRACT between the request pipeline (serve) and the task engine. The types are fixed;
// the implementation is the task engine's.
import type { Application, Endpoint } from '../compiler/ast.js';
import type { ExpansionScope } from '../template/expand.js';
import type { RuntimeObserver } from './observer.js';
import type { Upload } from './upload.js';

export interface TaskServicesOptions {
  readonly application: Application;
  readonly observer: RuntimeObserver;
  /** --smtp-url, else ENDPOINT_SERVICE_SMTP_URL, else undefined (then email-sending-configuration.xml). */
  readonly smtpUrl?: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Long-lived, per process: pooled SMTP transport, HTTP client. */
export interface TaskServices {
  close(): Promise<void>;
}

export interface TaskRunRequest {
  readonly endpoint: Endpoint;
  /** Parameters, system values and env of the request. */
  readonly scope: ExpansionScope;
  readonly uploads: readonly Upload[];
  readonly requestId: string;
}

export type TaskRunResult =
  | { readonly ok: true; readonly intermediate: ReadonlyMap<string, string> }
  /** internalError: for logs and ${internal-error-text} only. */
  | { readonly ok: false; readonly failedTask: string; readonly internalError: string };

export interface TaskRun {
  /** Settles as soon as the outcome is known: all tasks done and mail delivered, or the first counting failure. */
  readonly result: Promise<TaskRunResult>;
  /** Settles when every started task has finished (shutdown waits for it). Never rejects. */
  readonly settled: Promise<void>;
}

export function createTaskServices(_options: TaskServicesOptions): TaskServices {
  throw new Error('task engine not implemented yet');
}

export function startTasks(_request: TaskRunRequest, _services: TaskServices): TaskRun {
  throw new Error('task engine not implemented yet');
}
