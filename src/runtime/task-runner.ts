// The task engine of one process: each kind's services (an HTTP client, an SMTP pool), made
// on first use, and the start of one request's tasks on the scheduler. Reports every task
// outcome, with its error code, to the observer (logs and metrics).

import type { Endpoint } from '../compiler/ast.js';
import type { Task } from '../compiler/ast.js';
import type { EffectLedger, TaskOptions, TaskRequest, TaskServices } from '../tasks/kind.js';
import type { TaskKinds } from '../tasks/registry.js';
import type { ExpansionScope } from '../template/expand.js';
import { ATTR, type Span } from '../tracing.js';
import type { RequestUploads } from '../upload.js';
import type { RuntimeObserver } from './observer.js';
import { scheduleTasks, type ResumeState, type TaskReport, type TaskRun, type TaskStep } from './scheduler.js';

export type { ResumeState, TaskReport, TaskRun, TaskRunResult } from './scheduler.js';

export interface TaskRunRequest {
  readonly endpoint: Endpoint;
  /** Parameters, system values and env of the request. */
  readonly scope: ExpansionScope;
  /** Held from the start of the run until every started task has finished. */
  readonly uploads: RequestUploads;
  readonly requestId: string;
  /** Tasks prepared before the first side effect, by id. */
  readonly prepared?: ReadonlyMap<string, unknown>;
  /** A durable run (src/queue/): where it stands, and how each outcome and irreversible step is recorded. */
  readonly durable?: DurableRun;
  /** The request's span when tracing is on: each task that runs gets a child, ended with its outcome. */
  readonly span?: Span;
}

export interface DurableRun {
  readonly resume: ResumeState;
  /** Every task report, after the observer has it (the checkpoint). */
  recorded(report: TaskReport): void;
  /** Asked only for a task of a kind that sends mail: the record of its messages. */
  effects(task: Task): EffectLedger;
}

/** Long-lived, per process and application; made on the first request with tasks. */
export class TaskEngine {
  /** Every kind's services, made now: cheap (clients load their libraries on first use), and closed together. */
  private readonly services: ReadonlyMap<string, TaskServices>;

  constructor(
    readonly kinds: TaskKinds,
    private readonly options: TaskOptions,
    private readonly observer: RuntimeObserver,
  ) {
    this.services = new Map(kinds.list.map((kind) => [kind.kind, kind.createServices(options) as TaskServices]));
  }

  start(request: TaskRunRequest): TaskRun {
    const { endpoint } = request;
    const taskRequest: TaskRequest = {
      separator: endpoint.separator,
      uploads: request.uploads.files,
      body: request.uploads.body,
      application: this.options.application,
    };
    const release = request.uploads.hold();
    let run: TaskRun;
    try {
      run = this.schedule(request, taskRequest);
    } catch (error) {
      release();
      throw error;
    }
    // Background runs and runs that outlive a failed request included: the files go when nothing can read them any more.
    void run.settled.then(release);
    return run;
  }

  private schedule(request: TaskRunRequest, taskRequest: TaskRequest): TaskRun {
    const { endpoint } = request;
    const steps = new Map<string, TaskStep>();
    const parent = request.span !== undefined && request.span.recording ? request.span : null;
    // Tracing only: the span of each task, from the start of its execution to its report.
    const spans = parent === null ? null : new Map<string, Span>();
    const { durable } = request;
    return scheduleTasks({
      tasks: endpoint.tasks,
      graph: endpoint.taskGraph,
      separator: endpoint.separator,
      scope: request.scope,
      ...(request.prepared !== undefined ? { prepared: request.prepared } : {}),
      ...(durable !== undefined ? { resume: durable.resume } : {}),
      stepFor: (task) => {
        let step = steps.get(task.kind);
        if (step === undefined) {
          const kind = this.kinds.of(task);
          const services = this.services.get(task.kind)!;
          // Only a kind that sends mail has irreversible steps for a durable run to record.
          const ledger = kind.sendsMail ? durable : undefined;
          step = {
            deliversLast: kind.deliversLast,
            prepare: (t, scope) => kind.prepare(t, scope, taskRequest, this.options.settings),
            execute:
              spans === null && ledger === undefined
                ? (t, prepared, control) => kind.execute(t, prepared, services, control)
                : (t, prepared, control) => {
                    let span: Span | undefined;
                    if (spans !== null) {
                      span = taskSpan(parent!, t.id, t.kind);
                      spans.set(t.id, span);
                    }
                    const effects = ledger?.effects(t);
                    return kind.execute(t, prepared, services, {
                      mayContinue: () => control.mayContinue(),
                      ...(span !== undefined ? { span } : {}),
                      ...(effects !== undefined ? { effects } : {}),
                    });
                  },
          };
          steps.set(task.kind, step);
        }
        return step;
      },
      report: (report) => {
        this.report(request, report);
        if (spans !== null) endTaskSpan(spans, parent!, report);
        durable?.recorded(report);
      },
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.services.values()].map((s) => s.close()));
  }

  private report(request: TaskRunRequest, report: TaskReport): void {
    const { error, reason } = report;
    this.observer.taskFinished({
      requestId: request.requestId,
      endpoint: request.endpoint.name,
      taskId: report.task.id,
      kind: report.task.kind,
      outcome: report.outcome,
      durationMs: Math.round(report.durationMs * 1000) / 1000,
      attempts: report.attempts,
      ...(error !== undefined ? { error: error.message, code: error.code } : reason !== undefined ? { error: reason } : {}),
    });
  }
}

function taskSpan(parent: Span, id: string, kind: string): Span {
  const span = parent.child(`task ${id}`, 'internal');
  span.setAttribute(ATTR.taskId, id);
  span.setAttribute(ATTR.taskKind, kind);
  return span;
}

/**
 * Ends a task's span with its outcome. A task that failed before it was executed (its
 * condition, a value it could not use) gets a span too, so the trace shows why the request
 * failed; a task skipped or not started has none.
 */
function endTaskSpan(spans: Map<string, Span>, parent: Span, report: TaskReport): void {
  const { task } = report;
  let span = spans.get(task.id);
  if (span === undefined) {
    if (report.error === undefined) return;
    span = taskSpan(parent, task.id, task.kind);
  }
  spans.delete(task.id);
  span.setAttribute(ATTR.taskOutcome, report.outcome);
  span.setAttribute(ATTR.taskAttempts, report.attempts);
  if (report.error !== undefined) span.setError(report.error.code);
  span.end();
}
