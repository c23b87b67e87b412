// Runs one request's tasks in dependency order. It knows dependencies, conditions, outcomes
// and "delivers last"; what a task does is its kind's business (src/tasks/<kind>/), reached
// through the TaskStep each task is given. Unit-tested with fake steps (test/runtime/).
//
// A task starts once all its dependencies are done; the first failure that counts stops new
// starts and settles the result at once, while running tasks finish and are still reported.
// Every method catches its own errors: a task can never reject a promise that nobody awaits
// (background mode) and crash the process.

import { performance } from 'node:perf_hooks';
import type { Task } from '../compiler/ast.js';
import type { TaskGraph } from '../compiler/task-graph.js';
import { describeError } from '../errors.js';
import { TaskError, toTaskError } from '../tasks/errors.js';
import type { ExecuteControl, ExecuteResult } from '../tasks/kind.js';
import { evaluateCondition } from '../template/condition.js';
import type { ExpansionScope } from '../template/expand.js';
import type { TaskOutcome } from './observer.js';

/** What the scheduler needs of a task's kind, bound to one request. */
export interface TaskStep {
  readonly deliversLast: boolean;
  /** Pure; throws when the request's values cannot be used. */
  prepare(task: Task, scope: ExpansionScope): unknown;
  execute(task: Task, prepared: unknown, control: ExecuteControl): Promise<ExecuteResult>;
}

export interface TaskReport {
  readonly task: Task;
  readonly outcome: TaskOutcome;
  readonly durationMs: number;
  readonly attempts: number;
  /** Failures: the coded error. */
  readonly error?: TaskError;
  /** Why a task did not run or did not finish (not started, not delivered). */
  readonly reason?: string;
  /** Succeeded: the intermediate values it produced (a durable run checkpoints them). */
  readonly outputs?: ReadonlyMap<string, string>;
}

/** A run taken up again (the queue): tasks finished earlier are not run, their values are known. */
export interface ResumeState {
  /** Tasks that need no new run: succeeded, skipped, or failed with ignore-if-error. */
  readonly finished: ReadonlySet<string>;
  readonly intermediate: ReadonlyMap<string, string>;
}

export interface ScheduleInput {
  readonly tasks: readonly Task[];
  readonly graph: TaskGraph;
  /** The endpoint's multiple-value-separator, for conditions. */
  readonly separator: string;
  /** Parameters, system values and env; each task's intermediate inputs are added to it. */
  readonly scope: ExpansionScope;
  /** Tasks prepared before the request's first side effect (preparation.ts), by id: sent as they are. */
  readonly prepared?: ReadonlyMap<string, unknown>;
  readonly resume?: ResumeState;
  stepFor(task: Task): TaskStep;
  report(report: TaskReport): void;
}

export type TaskRunResult =
  | { readonly ok: true; readonly intermediate: ReadonlyMap<string, string> }
  | { readonly ok: false; readonly cause: 'task-failed'; readonly failedTask: string; readonly error: TaskError }
  /** interrupt() was called: `error` is the one it was given. */
  | { readonly ok: false; readonly cause: 'interrupted'; readonly error: TaskError };

export interface TaskRun {
  /** Settles as soon as the outcome is known: all tasks done and mail delivered, or the first counting failure. */
  readonly result: Promise<TaskRunResult>;
  /** Settles when every started task has finished (shutdown waits for it). Never rejects. */
  readonly settled: Promise<void>;
  /**
   * Starts nothing more (a worker shutting down): waiting tasks are reported not started, running
   * ones are asked to stop between steps, and the result settles as failed with `error`.
   */
  interrupt(error: TaskError): void;
}

export function scheduleTasks(input: ScheduleInput): TaskRun {
  // One task not finished before, the common case: nothing to order, so no graph to walk and no
  // state per task to keep (docs/performance.md, "A run of one task").
  const only = input.tasks.length === 1 ? input.tasks[0]! : undefined;
  if (only !== undefined && input.resume?.finished.has(only.id) !== true) return new OneTask(input, only).start();
  return new Schedule(input).start();
}

/** Why nothing more starts: a task failed, or the run was interrupted. */
type Stop = { readonly kind: 'task-failed'; readonly taskId: string } | { readonly kind: 'interrupted'; readonly reason: string };

type TaskState =
  | 'waiting'
  | 'running'
  /** Prepared, delivers last: waits for every other task to finish. */
  | 'held'
  | 'done';

interface Held {
  readonly task: Task;
  readonly step: TaskStep;
  readonly prepared: unknown;
  /** Preparation time, so the reported duration is the task's own work, not its wait. */
  readonly prepareMs: number;
}

/** What every run shares: one task's steps, the failure that stops the run, the result. Subclasses keep the state of the tasks. */
abstract class Run {
  protected readonly intermediate = new Map<string, string>();
  /** Prepared tasks that deliver last, in the order they were prepared. */
  protected held: Held[] | null = null;
  /** Set once, by the first failure that counts or by interrupt(); null while the run goes on. */
  protected stopped: Stop | null = null;
  protected delivering = false;
  protected inFlight = 0;
  private resultDone = false;
  private resolveResult!: (result: TaskRunResult) => void;
  private resolveSettled!: () => void;
  private readonly result: Promise<TaskRunResult>;
  private readonly settled: Promise<void>;
  protected readonly control: ExecuteControl = { mayContinue: () => this.stopped === null };

  constructor(protected readonly input: ScheduleInput) {
    this.result = new Promise((resolve) => (this.resolveResult = resolve));
    this.settled = new Promise((resolve) => (this.resolveSettled = resolve));
    if (input.resume !== undefined) for (const [name, value] of input.resume.intermediate) this.intermediate.set(name, value);
  }

  protected abstract stateOf(task: Task): TaskState;
  protected abstract setState(task: Task, state: TaskState): void;
  /** A task is done (or held): the tasks waiting on it may start. */
  protected abstract releaseDependants(task: Task): void;
  protected abstract allTasksDone(): boolean;

  protected handle(): TaskRun {
    return { result: this.result, settled: this.settled, interrupt: (error) => this.stop({ kind: 'interrupted', reason: error.message }, error) };
  }

  protected launch(task: Task): void {
    if (this.stopped !== null || this.stateOf(task) !== 'waiting') return;
    this.setState(task, 'running');
    this.inFlight++;
    // Deferred so that a synchronous failure in one task cannot stop its siblings from starting.
    void Promise.resolve()
      .then(() => this.run(task))
      .catch((error: unknown) => this.taskFailed(task, unexpected(error), 0))
      .finally(() => {
        this.inFlight--;
        this.checkProgress();
      });
  }

  private async run(task: Task): Promise<void> {
    // A sibling released together with a task that failed synchronously (in its condition or
    // prepare) is not started: the first failure stops new starts.
    if (this.stopped !== null) {
      this.setState(task, 'done');
      this.report({ task, outcome: 'not-started', durationMs: 0, attempts: 0, reason: `not started: ${this.why()}` });
      return;
    }
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    const scope = this.scopeFor(task);
    if (task.condition !== null) {
      let holds: boolean;
      try {
        holds = evaluateCondition(task.condition, scope, this.input.separator);
      } catch (error) {
        this.taskFailed(task, toTaskError(error, 'condition').withAttempts(0, `condition: ${toTaskError(error).message}`), elapsed());
        return;
      }
      if (!holds) {
        this.report({ task, outcome: 'skipped', durationMs: elapsed(), attempts: 0 });
        this.finish(task);
        return;
      }
    }
    const step = this.input.stepFor(task);
    let prepared: unknown;
    try {
      prepared = this.input.prepared?.has(task.id) === true ? this.input.prepared.get(task.id) : step.prepare(task, scope);
    } catch (error) {
      this.taskFailed(task, toTaskError(error, 'invalid-value'), elapsed());
      return;
    }
    if (step.deliversLast) {
      this.hold({ task, step, prepared, prepareMs: elapsed() });
      return;
    }
    let result: ExecuteResult;
    try {
      result = await step.execute(task, prepared, this.control);
    } catch (error) {
      const failure = toTaskError(error);
      this.taskFailed(task, failure, elapsed(), failure.attempts);
      return;
    }
    if (result.outputs !== undefined) for (const [name, value] of result.outputs) this.intermediate.set(name, value);
    this.finished(task, result, elapsed(), 'not started', result.outputs);
    if (result.stopped === undefined) this.releaseDependants(task);
  }

  /** Reports a task whose execute returned: done, or stopped early because another task failed. */
  private finished(task: Task, result: ExecuteResult, durationMs: number, notDone = 'not started', outputs?: ReadonlyMap<string, string>): void {
    this.setState(task, 'done');
    if (result.stopped === undefined) {
      this.report({ task, outcome: 'succeeded', durationMs, attempts: result.attempts, ...(outputs !== undefined ? { outputs } : {}) });
    } else if (result.stopped.done === null) {
      this.report({ task, outcome: 'not-started', durationMs, attempts: 0, reason: `${notDone}: ${this.why()}` });
    } else {
      const reason = `${result.stopped.done}: ${this.why()}`;
      this.report({ task, outcome: task.ignoreIfError ? 'ignored-failure' : 'failed', durationMs, attempts: result.attempts, reason });
    }
  }

  private hold(entry: Held): void {
    const { task } = entry;
    if (this.stopped !== null) {
      this.report({ task, outcome: 'not-started', durationMs: entry.prepareMs, attempts: 0, reason: `not delivered: ${this.why()}` });
      this.setState(task, 'done');
      return;
    }
    (this.held ??= []).push(entry);
    // Held counts as finished for the tasks after it: it runs after all of them, so making
    // them wait for it would deadlock.
    this.setState(task, 'held');
    this.releaseDependants(task);
  }

  private finish(task: Task): void {
    this.setState(task, 'done');
    this.releaseDependants(task);
  }

  private taskFailed(task: Task, error: TaskError, durationMs: number, attempts = 0): void {
    if (task.ignoreIfError) {
      this.report({ task, outcome: 'ignored-failure', durationMs, attempts, error });
      this.finish(task);
      return;
    }
    this.report({ task, outcome: 'failed', durationMs, attempts, error });
    this.setState(task, 'done');
    this.stop({ kind: 'task-failed', taskId: task.id }, error);
  }

  private stop(stop: Stop, error: TaskError): void {
    if (this.stopped !== null) return;
    this.stopped = stop;
    for (const task of this.input.tasks) {
      const state = this.stateOf(task);
      if (state === 'waiting') {
        this.setState(task, 'done');
        this.report({ task, outcome: 'not-started', durationMs: 0, attempts: 0, reason: `not started: ${this.why()}` });
      } else if (state === 'held' && !this.delivering) {
        this.setState(task, 'done');
        this.report({ task, outcome: 'not-started', durationMs: 0, attempts: 0, reason: `not delivered: ${this.why()}` });
      }
    }
    this.settleResult(
      stop.kind === 'task-failed' ? { ok: false, cause: 'task-failed', failedTask: stop.taskId, error } : { ok: false, cause: 'interrupted', error },
    );
  }

  /** Called whenever work ends: starts the held tasks when all else is done, settles when idle. */
  protected checkProgress(): void {
    if (this.inFlight === 0 && this.stopped === null && !this.delivering && this.allTasksDone()) {
      // Nothing runs any more, so the values are final: the map itself is the result's.
      if (this.held === null) this.settleResult({ ok: true, intermediate: this.intermediate });
      else {
        this.runHeld(this.held);
        return;
      }
    }
    if (this.inFlight === 0 && this.resultDone) this.resolveSettled();
  }

  private runHeld(held: readonly Held[]): void {
    this.delivering = true;
    this.inFlight++;
    void Promise.all(held.map((entry) => this.runOneHeld(entry)))
      .then(() => {
        if (this.stopped === null) this.settleResult({ ok: true, intermediate: this.intermediate });
      })
      .catch((error: unknown) => this.stop({ kind: 'task-failed', taskId: held[0]!.task.id }, unexpected(error)))
      .finally(() => {
        this.inFlight--;
        this.checkProgress();
      });
  }

  private async runOneHeld(entry: Held): Promise<void> {
    const { task } = entry;
    const started = performance.now();
    const elapsed = () => entry.prepareMs + (performance.now() - started);
    let result: ExecuteResult;
    try {
      result = await entry.step.execute(task, entry.prepared, this.control);
    } catch (error) {
      const failure = toTaskError(error);
      this.taskFailed(task, failure, elapsed(), failure.attempts);
      return;
    }
    this.finished(task, result, elapsed(), 'not delivered');
  }

  /** Why nothing more starts: a task failed, or the run was interrupted. */
  private why(): string {
    const stop = this.stopped;
    if (stop === null) return 'the run goes on';
    return stop.kind === 'interrupted' ? `the run was interrupted (${stop.reason})` : `task "${stop.taskId}" failed`;
  }

  private scopeFor(task: Task): ExpansionScope {
    // A task without inputs shares one empty map: nothing writes to it.
    if (task.inputs.length === 0) return { ...this.input.scope, intermediate: NO_INPUTS };
    const inputs = new Map<string, string>();
    for (const name of task.inputs) {
      const value = this.intermediate.get(name);
      // A value that was never produced stays absent: expanding it then fails the task with
      // the template's own "has not been produced" error, which names the value.
      if (value !== undefined) inputs.set(name, value);
    }
    return { ...this.input.scope, intermediate: inputs };
  }

  private settleResult(result: TaskRunResult): void {
    if (this.resultDone) return;
    this.resultDone = true;
    this.resolveResult(result);
  }

  private report(report: TaskReport): void {
    try {
      this.input.report(report);
    } catch {
      // A broken observer must not turn into a task failure or an unhandled rejection.
    }
  }
}

const NO_INPUTS: ReadonlyMap<string, string> = new Map();

/** Tasks in dependency order: each starts once all its dependencies are done. */
class Schedule extends Run {
  private readonly byId: ReadonlyMap<string, Task>;
  private readonly state = new Map<string, TaskState>();
  private readonly pendingDeps = new Map<string, number>();

  constructor(input: ScheduleInput) {
    super(input);
    this.byId = new Map(input.tasks.map((t) => [t.id, t]));
  }

  start(): TaskRun {
    const { tasks, graph } = this.input;
    const finished = this.input.resume?.finished;
    for (const task of tasks) {
      this.state.set(task.id, finished?.has(task.id) === true ? 'done' : 'waiting');
      this.pendingDeps.set(task.id, (graph.dependsOn.get(task.id) ?? []).filter((id) => finished?.has(id) !== true).length);
    }
    for (const task of tasks) if (this.pendingDeps.get(task.id) === 0) this.launch(task);
    this.checkProgress();
    return this.handle();
  }

  protected stateOf(task: Task): TaskState {
    return this.state.get(task.id)!;
  }

  protected setState(task: Task, state: TaskState): void {
    this.state.set(task.id, state);
  }

  protected releaseDependants(task: Task): void {
    for (const id of this.input.graph.dependents.get(task.id) ?? []) {
      const left = (this.pendingDeps.get(id) ?? 1) - 1;
      this.pendingDeps.set(id, left);
      if (left === 0) {
        const next = this.byId.get(id);
        if (next) this.launch(next);
      }
    }
  }

  protected allTasksDone(): boolean {
    for (const state of this.state.values()) if (state === 'waiting' || state === 'running') return false;
    return true;
  }
}

/** The only task of a run, not finished before: the same steps, its state in one field. */
class OneTask extends Run {
  private state: TaskState = 'waiting';

  constructor(
    input: ScheduleInput,
    private readonly task: Task,
  ) {
    super(input);
  }

  start(): TaskRun {
    this.launch(this.task);
    return this.handle();
  }

  protected stateOf(): TaskState {
    return this.state;
  }

  protected setState(_task: Task, state: TaskState): void {
    this.state = state;
  }

  protected releaseDependants(): void {}

  protected allTasksDone(): boolean {
    return this.state !== 'waiting' && this.state !== 'running';
  }
}

/** A bug rather than a failure of the task: said so in the log. */
function unexpected(error: unknown): TaskError {
  return error instanceof TaskError ? error : new TaskError(`internal error: ${describeError(error)}`, { code: 'internal', cause: error });
}
