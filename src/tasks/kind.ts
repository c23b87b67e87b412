// A task kind, whole: how it is written (the compiler's part, TaskKindSyntax), how it is made
// concrete for one request (prepare: pure), how it is carried out (execute: the only I/O), and
// how dry-run shows it (describe). One folder per kind exports one such definition, and
// registry.ts lists them; nothing else in the service names a kind.

import type { Application, Task } from '../compiler/ast.js';
import type { TaskKindSyntax } from '../compiler/task-kind.js';
import type { ExpansionScope } from '../template/expand.js';
import type { Condition } from '../template/types.js';
import type { Span } from '../tracing.js';
import type { RawBody, Upload } from '../upload.js';
import type { TaskSettings } from './settings.js';

/** What prepare sees of the request beyond its scope. */
export interface TaskRequest {
  /** The endpoint's multiple-value-separator, for conditions. */
  readonly separator: string;
  readonly uploads: readonly Upload[];
  /** The request body as received: kept only for an endpoint whose tasks use it (Endpoint.keepsRequestBody), else null. */
  readonly body: RawBody | null;
  readonly application: Application;
}

/** The service's task options (serve and its workers), from which each kind builds its services. */
export interface TaskOptions {
  readonly application: Application;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** What the command line decided for every kind; each kind reads its own member. */
  readonly settings: TaskSettings;
  /** For problems outside any task (an idle SMTP connection dropped). */
  warn(message: string): void;
}

/** A kind's long-lived resources in one process (a connection pool, a client). */
export interface TaskServices {
  close(): Promise<void>;
}

export interface ExecuteControl {
  /** False once another task of the request failed: a kind doing several things stops between them. */
  mayContinue(): boolean;
  /** A durable run (the queue) only: asked around each irreversible step (a mail message). */
  readonly effects?: EffectLedger;
  /** The task's span, only when tracing is on: handed to withRetries, which gives each attempt a child. */
  readonly span?: Span;
}

/**
 * Irreversible steps of one task, recorded where a later attempt (or another worker) can see
 * them: `before` writes "step i is being done" and says whether to do it, `after` writes "done".
 */
export interface EffectLedger {
  /**
   * `go`: do it (the marker is written); `done`: an earlier attempt did it; `unknown`: an earlier
   * attempt began it and its outcome is unknown, so it is left alone; `lost`: this process no
   * longer owns the run (another worker took it over), so nothing more may be done.
   */
  before(step: number, id: string): Promise<'go' | 'done' | 'unknown' | 'lost'>;
  after(step: number): Promise<void>;
  /** The step began and certainly did not happen (the peer refused it): a later attempt may do it, and nobody need wonder whether it did. */
  notDone(step: number): Promise<void>;
}

export interface ExecuteResult {
  readonly attempts: number;
  /** Intermediate values read from the answer (kinds with outputs). */
  readonly outputs?: ReadonlyMap<string, string>;
  /** mayContinue() stopped the work early: what was done (`delivered 1 of 2 messages`), or null when nothing was. */
  readonly stopped?: { readonly done: string | null };
}

/** A line of dry-run's text format: an optional styled head, then text. */
export interface TextLine {
  readonly indent: number;
  readonly head?: string;
  readonly headStyle?: 'bold' | 'dim';
  readonly text: string;
}

/** What dry-run shows of a prepared task. */
export interface TaskDescription {
  /** Its member in dry-run's JSON document (`request`, `emails`), and the value there. */
  readonly member: string;
  readonly json: unknown;
  readonly text: readonly TextLine[];
}

export interface DescribeInput {
  /** Real values, for conditions and checks (an intermediate value throws MissingValueError). */
  readonly real: ExpansionScope;
  /** For showing: secrets as ***, intermediate values as <from TASK>. */
  readonly shown: ExpansionScope;
  readonly request: TaskRequest;
  /** As serve would run the task: each kind reads its own member. */
  readonly settings: TaskSettings;
  /** A condition decided without I/O: true, false, or null when only the run can tell. */
  decide(condition: Condition | null): boolean | null;
  /** Something dry-run cannot show (no uploads in a simulation). */
  note(text: string): void;
}

export interface TaskKind<T extends Task = Task, Prepared = unknown, Services extends TaskServices = TaskServices> extends TaskKindSyntax<T> {
  /**
   * Runs after every other task of the request has finished, and only if none failed (mail:
   * a message cannot be taken back). It is prepared when its dependencies are done, and counts
   * as done for its dependants then, so that waiting for it cannot deadlock.
   */
  readonly deliversLast: boolean;
  /**
   * Whether this task may use the files uploaded with the request (TaskRequest.uploads). Asked
   * once per endpoint when the application is loaded: an endpoint none of whose tasks reads them
   * drops uploaded files as they arrive, so a kind that says false here sees no uploads; a
   * durable queue stores a run's uploads only when one of its tasks reads them.
   */
  readsUploads(task: T): boolean;
  /**
   * The endpoint's parameters this task treats as secrets: those written into what dry-run shows
   * as *** (an Authorization header, basic authentication, a header read from ${env:...}).
   * `jobs show --reveal` masks their values the same way. Without it, none.
   */
  secretParameters?(task: T): readonly string[];
  /**
   * Pure: what would go on the wire. Throws (any error) when the request's values cannot be used.
   * `settings`: what the command line decided for every kind; a kind reads its own member.
   */
  prepare(task: T, scope: ExpansionScope, request: TaskRequest, settings: TaskSettings): Prepared;
  /** Created once per process and application, with the task engine (on the first request with tasks). */
  createServices(options: TaskOptions): Services;
  /** The I/O. Fails with a TaskError (see errors.ts), after the retries of retry.ts. */
  execute(task: T, prepared: Prepared, services: Services, control: ExecuteControl): Promise<ExecuteResult>;
  /** For dry-run: prepares with the shown scope (same code as serve) and describes the result. */
  describe(task: T, input: DescribeInput): TaskDescription;
}

/**
 * Any kind, as the registry holds it: each kind's own types are erased there. Sound because
 * the registry only ever hands a task to the kind whose name is its `kind` (registry.ts).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the erasure described above
export type AnyTaskKind = TaskKind<any, any, any>;
