// The worker's side of the queue: BullMQ hands it one job per task run; it rebuilds the run from
// its own compiled endpoints.xml and environment, and runs it on the same task engine as an
// in-process run, taking up where the checkpoint says:
//
// - after each task outcome, the outcome and the intermediate values (sealed) are written to the
//   job's progress, so a retried or recovered job runs only what is unfinished; the record of a
//   run that succeeded goes with its completion instead (the job's return value, job.ts), in the
//   same store write that completes it;
// - around each mail message a sending/sent marker is written, after checking that this worker
//   still holds the job's lock; a message left "sending" by a crash is not sent again unless
//   --email-redelivery at-least-once (it is reported delivery-unknown);
// - a transient failure is retried by BullMQ (full-jitter backoff, a long Retry-After honoured),
//   a permanent one goes straight to the failed set;
// - on shutdown, running jobs get --shutdown-timeout to finish; the rest are checkpointed and
//   handed back to the queue at once, without counting an attempt.
// - failed jobs older than --queue-retention are removed at start and about hourly (retention.ts).
// - no job is taken before this worker's --queue-lock-duration is found to be the queue's: one
//   that differs from another live worker's refuses to start (lock-agreement.ts).
// - a job its producer made void before any worker fetched it (the store took it after serve had
//   given up on it) says so in its progress, read with the job: it completes without running
//   anything, and a worker writes nothing to the store before it runs a job (fate.ts).

import type { Job, Worker } from 'bullmq';
import type { Application, Endpoint } from '../compiler/ast.js';
import { describeError } from '../errors.js';
import { bindParameters } from '../runtime/parameters.js';
import type { TaskEngine, TaskRun, TaskRunResult } from '../runtime/task-runner.js';
import { TaskError } from '../tasks/errors.js';
import { NO_TRACING, type Span, type Tracing } from '../tracing.js';
import type { ExpansionScope } from '../template/expand.js';
import { endpointFingerprint, hasPositionalTaskIds } from './fingerprint.js';
import {
  FINISHED_OUTCOMES,
  readProgress,
  unsealIntermediate,
  unsealRun,
  requestUploadsFromJob,
  type QueuedRun,
  type RunProgress,
  type SealedRun,
} from './job.js';
import { endJobSpan, startJobSpan } from './job-trace.js';
import type { JobFields, QueueObserver } from './observer.js';
import { MAX_JOB_BACKOFF_MS, MAX_STALLED_COUNT, type QueueSettings } from './settings.js';
import { RetentionSweeper } from './retention.js';
import { openStore, type Store } from './store.js';
import { Checkpoint } from './checkpoint.js';
import { LockAnnouncement } from './lock-agreement.js';

/** What the consumer needs of the application it runs jobs for (serve's LoadedApplication is one). */
export interface RunnableApplication {
  readonly application: Application;
  readonly env: Readonly<Record<string, string | undefined>>;
  taskEngine(): TaskEngine;
}

const TAKEN_OVER = 'job taken over by another worker: this one stops and records nothing more';

/** How long tasks still running when a job is handed back may take to record their outcome. */
const HAND_BACK_GRACE_MS = 1_000;

/** Waits for `settled`, at most `ms`; the timer goes when `settled` comes first (a worker handing back many jobs keeps no timers behind). */
async function settledWithin(settled: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** A failure that BullMQ retries; carries the peer's Retry-After for the backoff. */
class RetryableRunError extends Error {
  override readonly name = 'RetryableRunError';
  constructor(
    message: string,
    readonly retryAfterMs: number | null,
  ) {
    super(message);
  }
}

/**
 * How a job's run ended: one variant per outcome reported (observer.ts, RunOutcome), each with
 * what reporting it takes. `tell`: the error BullMQ is told by a throw; `code`: the failed task's,
 * or why the job could not run (the span's error, the log line's).
 */
type RunEnd =
  /** Its record goes to BullMQ as the job's return value, stored with the completion (job.ts, jobRecord). */
  | { readonly kind: 'completed'; readonly record: RunProgress }
  /** Its producer made it void before any worker fetched it: it completes, nothing run. */
  | { readonly kind: 'void' }
  /** Handed back (the worker shuts down) or taken over (another worker holds its lock): a DelayedError leaves the job where it is. */
  | { readonly kind: 'interrupted' }
  /** A transient failure with attempts left: BullMQ retries it after backoffDelay. */
  | { readonly kind: 'retrying'; readonly code: string; readonly tell: RetryableRunError }
  /** Failed for good: a permanent failure or an unreadable job (an UnrecoverableError), or the last attempt's failure. */
  | { readonly kind: 'failed'; readonly code: string; readonly tell: Error }
  /** The job no longer fits the configuration: failed for good (an UnrecoverableError). */
  | { readonly kind: 'config-changed'; readonly tell: Error };

/** The code of a run that failed (a span's error); null for the outcomes that are no failure. */
function failureCode(end: RunEnd): string | null {
  switch (end.kind) {
    case 'completed':
    case 'void':
    case 'interrupted':
      return null;
    case 'retrying':
    case 'failed':
      return end.code;
    case 'config-changed':
      return end.kind;
  }
}

/**
 * What the steps of a job's run share: the job, its record, and how to write to both. A class:
 * a job makes one object, not one per method (docs/performance.md, "A worker's job").
 */
class RunContext {
  constructor(
    readonly job: Job<QueuedRun>,
    readonly token: string | undefined,
    readonly fields: JobFields,
    readonly progress: RunProgress,
    private readonly store: Store,
  ) {}

  /** Appends to the attempt history `jobs show` prints. */
  history(text: string): Promise<unknown> {
    return this.job.log(`${new Date().toISOString()} attempt ${this.fields.attempt}: ${text}`).catch(() => 0);
  }

  /** Writes the record before the run's checkpoint exists; fenced as its writes are (fenced-progress.ts). */
  writeProgress(): Promise<unknown> {
    const { job, token, progress } = this;
    return (token === undefined ? job.updateProgress(progress) : this.store.writeProgress(this.fields.jobId, token, JSON.stringify(progress))).catch(() => {});
  }
}

/** A job's run, opened and checked, ready to start. */
interface Prepared {
  readonly loaded: RunnableApplication;
  readonly endpoint: Endpoint;
  readonly sealed: SealedRun;
  readonly intermediate: Map<string, string>;
  readonly parameters: ReadonlyMap<string, string>;
}

/** A job's run under way, interrupted when the worker shuts down before it ends. */
class ActiveRun {
  interrupted = false;
  constructor(private readonly run: TaskRun) {}

  interrupt(): void {
    this.interrupted = true;
    this.run.interrupt(new TaskError('the worker is shutting down', { code: 'shutting-down', transient: true }));
  }
}

const NOTHING_FINISHED: ReadonlySet<string> = new Set();

/** Tasks an earlier run finished; one set for every job with none, the common case. */
function finishedTasks(progress: RunProgress): ReadonlySet<string> {
  let finished: Set<string> | undefined;
  for (const id in progress.tasks) if (FINISHED_OUTCOMES.has(progress.tasks[id]!.outcome)) (finished ??= new Set()).add(id);
  return finished ?? NOTHING_FINISHED;
}

function hasAny(record: object): boolean {
  for (const _ in record) return true;
  return false;
}

/**
 * How BullMQ words the failure of a job that stalled more than maxStalledCount times (its
 * moveStalledJobsToWait script, and the same text in its PostgreSQL backend): BullMQ raises no
 * error of its own kind for it. test/architecture/pinned-internals.test.ts fails when an upgrade
 * changes the text.
 */
export const STALLED_TOO_OFTEN = /stalled more than allowable limit/;

/**
 * The job's id in BullMQ's error for a completion it refused because the job was no longer this
 * worker's: its lock gone or another's (Redis), or the job no longer active (PostgreSQL checks
 * that first). The error carries its code (ErrorCode), and the id only in its text.
 * test/architecture/pinned-internals.test.ts fails when an upgrade changes the text.
 */
export const LOCKED_JOB_ID = /^(?:Missing lock for job (\S+)\. |Lock mismatch for job (\S+)\. |Job (\S+) is not in the active state\. )/;

export class QueueConsumer {
  private readonly active = new Set<ActiveRun>();
  /** Runs that succeeded, until BullMQ has completed their job: only then are they reported completed. */
  private readonly completing = new Map<string, { readonly fields: JobFields; readonly record: RunProgress }>();
  private worker!: Worker;
  private health: { readonly up: boolean; stop(): void } | null = null;
  private sweeper!: RetentionSweeper;
  private announcement!: LockAnnouncement;

  private constructor(
    private readonly settings: QueueSettings,
    private readonly store: Store,
    private readonly current: () => RunnableApplication,
    private readonly observer: QueueObserver,
    private readonly tracing: Tracing,
  ) {}

  /**
   * `watch`: report the store's state and check its configuration (when no producer in the process does).
   * `tracing`: on, each run of a job is a span in the trace of the request that queued it.
   */
  static async open(
    settings: QueueSettings,
    current: () => RunnableApplication,
    observer: QueueObserver,
    watch: boolean,
    tracing: Tracing = NO_TRACING,
    /** The consumer may not run jobs: its lock duration differs from the queue's (lock-agreement.ts); the line says so. */
    refused: (line: string) => void = () => {},
  ): Promise<QueueConsumer> {
    const store = await openStore(settings, 'worker', () => {});
    const consumer = new QueueConsumer(settings, store, current, observer, tracing);
    if (watch) consumer.health = store.watch(observer);
    consumer.worker = store.newWorker((job, token) => consumer.process(job as Job<QueuedRun>, token), {
      // Run once the queue's lock duration is agreed (below).
      autorun: false,
      concurrency: settings.concurrency,
      lockDuration: settings.lockDurationMs,
      stalledInterval: settings.lockDurationMs,
      maxStalledCount: MAX_STALLED_COUNT,
      settings: { backoffStrategy: (attemptsMade, _type, error, job) => backoffDelay(attemptsMade, error, job?.opts.backoff, settings.backoffMs) },
    });
    consumer.sweeper = new RetentionSweeper(
      store.newQueue(),
      settings.retentionMs,
      observer,
      // A connection still being made at start is waited for; one that was lost is down.
      async () => (await store.ready()) && (await store.answers()),
    );
    consumer.sweeper.start();
    consumer.worker.on('completed', (job) => consumer.completed(job.id));
    consumer.worker.on('error', (error) => consumer.completionRefused(error));
    consumer.worker.on('stalled', (jobId) => observer.log('warn', 'job stalled: its worker stopped renewing its lock; handed to another worker', { jobId }));
    consumer.worker.on('failed', (job, error) => consumer.failedByStore(job, error));
    consumer.announcement = new LockAnnouncement(store, settings, observer);
    void consumer.announcement.claim().then((line) => {
      if (line !== null) return refused(line);
      consumer.worker.run().catch((error: unknown) => observer.log('error', 'the queue could not be started', { error: describeError(error) }));
    });
    return consumer;
  }

  /** BullMQ itself fails a job that stalled too often; the processor reports every other failure. */
  private failedByStore(job: Job | undefined, error: Error): void {
    if (job === undefined || !STALLED_TOO_OFTEN.test(error.message)) return;
    const data = job.data as QueuedRun;
    const fields = { requestId: data.requestId, endpoint: data.endpoint, jobId: job.id ?? '', attempt: job.attemptsMade };
    this.observer.log('error', 'job failed for good: it stalled too often (its worker keeps dying)', { ...fields, reason: error.message });
    void job
      .log(
        `${new Date().toISOString()} attempt ${fields.attempt}: failed for good: it stalled ${job.stalledCounter} times, more than the ${MAX_STALLED_COUNT} allowed (its worker keeps dying)`,
      )
      .catch(() => 0);
    this.observer.finished(fields, 'failed');
  }

  /**
   * Stops taking jobs; running ones get `timeoutMs` to finish, then are interrupted, checkpointed
   * and handed back to the queue for another worker (no attempt counted).
   */
  async drain(timeoutMs: number): Promise<void> {
    this.sweeper.stop();
    this.announcement.stop();
    // Nothing runs while the store is down; BullMQ's close would wait for a connection first.
    if (this.active.size === 0 && !(await this.store.answers())) {
      this.health?.stop();
      await this.store.close();
      return;
    }
    const closing = this.worker.close();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      closing.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      for (const run of this.active) run.interrupt();
      await closing;
    }
    this.health?.stop();
    await this.store.close();
  }

  get up(): boolean {
    return this.health?.up ?? true;
  }

  get running(): number {
    return this.active.size;
  }

  private async process(job: Job<QueuedRun>, token: string | undefined): Promise<RunProgress | undefined> {
    const data = job.data;
    const fields: JobFields = { requestId: data.requestId, endpoint: data.endpoint, jobId: job.id!, attempt: job.attemptsMade + 1 };
    const span = startJobSpan(this.tracing, data, fields);
    // A run that threw before it could say how it ended (a bug) is a failure, and not reported.
    let end: RunEnd | undefined;
    try {
      end = await this.run(job, token, fields, span);
    } finally {
      endJobSpan(span, end?.kind ?? 'failed', end === undefined ? 'internal' : failureCode(end));
    }
    if (end.kind === 'completed') {
      // Reported once BullMQ has completed the job (completed()): it refuses a worker held up past
      // its lock, whose run then ends as taken over (completionRefused()).
      this.completing.set(fields.jobId, { fields, record: end.record });
      return end.record;
    }
    this.observer.finished(fields, end.kind);
    const tell = this.tell(end);
    if (tell !== null) throw tell;
    return undefined;
  }

  /** What BullMQ is told, by a throw, of a run that did not complete; null: nothing (a void job completes). */
  private tell(end: Exclude<RunEnd, { kind: 'completed' }>): Error | null {
    switch (end.kind) {
      case 'void':
        return null;
      case 'interrupted':
        return new this.store.bullmq.DelayedError();
      case 'retrying':
      case 'failed':
      case 'config-changed':
        return end.tell;
    }
  }

  private completed(jobId: string | undefined): void {
    const completing = jobId === undefined ? undefined : this.completing.get(jobId);
    // A void job completes too, with nothing of it to report here.
    if (completing === undefined) return;
    const { fields, record } = completing;
    this.completing.delete(fields.jobId);
    this.observer.finished(fields, 'completed');
    // The job's one info line: every task's outcome (a task's warning or error has a line of its own).
    const tasks: Record<string, string> = {};
    for (const id in record.tasks) tasks[id] = record.tasks[id]!.outcome;
    this.observer.log('info', 'job completed', { ...fields, tasks });
  }

  /** BullMQ refused to complete a job whose lock had passed to another worker: this run is taken over, as one that finds out earlier. */
  private completionRefused(error: Error): void {
    const { ErrorCode } = this.store.bullmq;
    const code = (error as { code?: unknown }).code;
    if (code !== ErrorCode.JobLockNotExist && code !== ErrorCode.JobLockMismatch && code !== ErrorCode.JobNotInState) return;
    const id = LOCKED_JOB_ID.exec(error.message);
    const fields = this.completing.get(id?.[1] ?? id?.[2] ?? id?.[3] ?? '')?.fields;
    if (fields === undefined) return;
    this.completing.delete(fields.jobId);
    this.observer.finished(fields, 'interrupted');
    this.observer.log('warn', TAKEN_OVER, { ...fields });
  }

  /** Every way the run ends is a RunEnd returned, reported once: by process(), or for a completion once BullMQ has made it. */
  private async run(job: Job<QueuedRun>, token: string | undefined, fields: JobFields, span: Span): Promise<RunEnd> {
    const context = this.context(job, token, fields);
    // Before anything runs: a job its producer made void before any worker fetched it (the
    // request was answered without it) says so in its progress, read with the job (fate.ts).
    if (context.progress.void === true) return await this.voidRun(context);
    // A job that runs as it was queued, the common case, is opened without a promise to wait on.
    const opened = this.prepare(context);
    const prepared = opened instanceof Promise ? await opened : opened;
    if ('kind' in prepared) return prepared;
    if (job.stalledCounter > (context.progress.stalls ?? 0)) await this.noteStalls(context);
    return await this.execute(context, prepared, span);
  }

  private context(job: Job<QueuedRun>, token: string | undefined, fields: JobFields): RunContext {
    return new RunContext(job, token, fields, readProgress(job.progress), this.store);
  }

  /**
   * Records a failure for good and gives the error that tells BullMQ not to retry the job.
   * `reason`: the log line's, when it says more than the store may keep.
   */
  private async permanent(context: RunContext, message: string, reason: string = message): Promise<Error> {
    await context.writeProgress();
    await context.history(`failed for good: ${message}`);
    this.observer.log('error', 'job failed for good', { ...context.fields, reason });
    return new this.store.bullmq.UnrecoverableError(message);
  }

  private async configChanged(context: RunContext, message: string): Promise<RunEnd> {
    return { kind: 'config-changed', tell: await this.permanent(context, message) };
  }

  private async voidRun(context: RunContext): Promise<RunEnd> {
    await context.history('void: its request was answered without it (the store took the job after serve gave up); nothing ran');
    this.observer.log('warn', 'job void: its request was answered without it; nothing runs', { ...context.fields });
    return { kind: 'void' };
  }

  /**
   * The endpoint, the opened run and its parameters under the current configuration; or why the
   * job cannot run. Waited on only when it cannot run as it was queued (a store write, or the
   * parameters bound again under a changed configuration).
   */
  private prepare(context: RunContext): Prepared | Promise<Prepared | RunEnd> {
    const { job, fields, progress } = context;
    const data = job.data;
    const loaded = this.current();
    const endpoint = loaded.application.endpointsByName.get(data.endpoint);
    if (endpoint === undefined) return this.configChanged(context, `config-changed: the endpoint "${data.endpoint}" is no longer in the configuration`);
    let sealed: SealedRun;
    let intermediate: Map<string, string>;
    try {
      sealed = unsealRun(this.settings.keys, fields.jobId, data.sealed);
      intermediate = unsealIntermediate(this.settings.keys, fields.jobId, progress.sealedIntermediate);
    } catch (error) {
      return this.permanent(context, `the job cannot be read: ${describeError(error)}`).then((tell): RunEnd => ({ kind: 'failed', code: 'unreadable', tell }));
    }
    const queued = new Map(sealed.parameters);
    const fingerprint = endpointFingerprint(loaded.application, endpoint);
    if (fingerprint === data.fingerprint) return { loaded, endpoint, sealed, intermediate, parameters: queued };
    return this.underConfiguration(context, endpoint, queued, fingerprint).then((parameters) =>
      'kind' in parameters ? parameters : { loaded, endpoint, sealed, intermediate, parameters },
    );
  }

  /** The queued parameters under the endpoint as configured now, which changed since the job was queued (--on-config-change); or why they cannot be. */
  private async underConfiguration(
    context: RunContext,
    endpoint: Endpoint,
    parameters: ReadonlyMap<string, string>,
    fingerprint: string,
  ): Promise<ReadonlyMap<string, string> | RunEnd> {
    const { data } = context.job;
    const policy = hasPositionalTaskIds(endpoint) ? 'strict' : this.settings.onConfigChange;
    context.progress.config = { fingerprint, mismatch: policy };
    if (policy === 'strict') {
      const why = policy !== this.settings.onConfigChange ? ' (its tasks have no explicit ids, so finished tasks cannot be matched)' : '';
      return await this.configChanged(context, `config-changed: the endpoint "${data.endpoint}" changed since the request was queued${why}`);
    }
    const finishedGone = Object.entries(context.progress.tasks).filter(
      ([id, r]) => FINISHED_OUTCOMES.has(r.outcome) && !endpoint.tasks.some((t) => t.id === id),
    );
    if (finishedGone.length > 0) {
      return await this.configChanged(context, `config-changed: finished task "${finishedGone[0]![0]}" is no longer in the endpoint "${data.endpoint}"`);
    }
    // New defaults and rules apply; a parameter that became required and was not sent fails the job.
    const bound = bindParameters(endpoint, new Map([...parameters].map(([name, value]) => [name, [value]])), null);
    if (!bound.ok) return await this.configChanged(context, `config-changed: the queued parameters no longer fit the endpoint: ${bound.detail}`);
    return bound.parameters;
  }

  /**
   * A worker that stopped without handing the job back (a kill, a crash, a store it lost) left
   * no line: say so here, once per stall, where `jobs show` reads the history.
   */
  private async noteStalls(context: RunContext): Promise<void> {
    const { job, progress } = context;
    const stalls = job.stalledCounter - (progress.stalls ?? 0);
    progress.stalls = job.stalledCounter;
    // Written now (a stall is rare): a run cut off again before its first checkpoint must not count this one twice.
    await context.writeProgress();
    await context.history(
      `interrupted: its worker stopped without handing the job back (killed, crashed or cut off from the store)${stalls > 1 ? `, ${stalls} times` : ''}; resumed by another worker once its lock expired`,
    );
  }

  /** Runs the unfinished tasks on the task engine, each outcome checkpointed, and says how the run ended. */
  private async execute(context: RunContext, prepared: Prepared, span: Span): Promise<RunEnd> {
    const { job, token, fields, progress } = context;
    const { loaded, endpoint, sealed, intermediate, parameters } = prepared;
    const data = job.data;
    const finished = finishedTasks(progress);
    const firstStart = job.attemptsMade === 0 && !hasAny(progress.tasks);
    this.observer.started(fields, firstStart ? Math.max(0, Date.now() - data.enqueuedAt) / 1000 : null);
    // A first start has no line of its own: the job's line is its completion's (or its warning's or error's).
    if (job.stalledCounter > 0) this.observer.log('info', 'job resumed after a stall', { ...fields, finishedTasks: finished.size });

    const checkpoint = new Checkpoint(
      job,
      token,
      this.store,
      progress,
      intermediate,
      this.settings,
      this.observer,
      fields,
      endpoint.tasks.length - finished.size,
      finished,
    );
    const scope: ExpansionScope = {
      parameters,
      system: sealed.system,
      env: loaded.env,
      ...(sealed.delivery !== undefined ? { delivery: sealed.delivery } : {}),
    };
    const run = loaded.taskEngine().start({
      endpoint,
      scope,
      // The job's own copy, in memory: nothing to remove when the run is over.
      uploads: requestUploadsFromJob(sealed),
      requestId: data.requestId,
      // The job's span when tracing is on (NO_SPAN otherwise): the tasks' spans go under it.
      span,
      // Where the run stands, each outcome recorded, each mail message's marker written.
      durable: checkpoint,
    });
    const active = new ActiveRun(run);
    this.active.add(active);
    let result: TaskRunResult;
    // The record of a run that succeeded, to complete the job with; null: lost, or not a success.
    let record: RunProgress | null = null;
    try {
      result = await run.result;
      if (!result.ok && active.interrupted) await settledWithin(run.settled, HAND_BACK_GRACE_MS);
      else await run.settled;
      // The last task's outcome too: `jobs show` reads every task's from the record. A run that
      // succeeded hands it to BullMQ's completion (one store write fewer); any other is written.
      if (result.ok) record = await checkpoint.completing();
      else await checkpoint.flush();
    } finally {
      this.active.delete(active);
    }
    return await this.ended(context, result, record, checkpoint, active.interrupted);
  }

  /** What the run's result means for the job: completed, taken over, handed back, retried or failed. */
  private async ended(context: RunContext, result: TaskRunResult, record: RunProgress | null, checkpoint: Checkpoint, interrupted: boolean): Promise<RunEnd> {
    const { job, token, fields } = context;
    // The record is null only when completing() found the lock lost.
    if (result.ok && record !== null) return { kind: 'completed', record };
    if (checkpoint.lost || result.ok) {
      // Another worker runs the job now (this one was held up past its lock): the record and the
      // outcome are that worker's; the job is left where it is.
      await context.history('stopped: another worker had taken the job over (this worker was held up past its lock); nothing more was sent or recorded here');
      this.observer.log('warn', TAKEN_OVER, { ...fields });
      return { kind: 'interrupted' };
    }
    checkpoint.close();
    if (interrupted || result.cause === 'interrupted') {
      await context.history('handed back: the worker is shutting down');
      await job.moveToDelayed(Date.now(), token);
      this.observer.log('info', 'job handed back to the queue: the worker is shutting down', { ...fields });
      return { kind: 'interrupted' };
    }
    const { error, failedTask } = result;
    // What the store keeps in clear (the job's failed reason, its attempt history): the task and
    // the code, no value; the full text is in the checkpoint, sealed. The log line has it all.
    const message = `task "${failedTask}" failed (${error.code})`;
    const logged = { ...fields, reason: `task "${failedTask}" failed: ${error.message}` };
    if (!error.transient) return { kind: 'failed', code: error.code, tell: await this.permanent(context, message, logged.reason) };
    if (job.attemptsMade + 1 < (job.opts.attempts ?? 1)) {
      await context.history(`retry scheduled: ${message}`);
      this.observer.log('warn', 'job retry scheduled', { ...logged, code: error.code });
      return { kind: 'retrying', code: error.code, tell: new RetryableRunError(message, error.retryAfterMs) };
    }
    await context.history(`failed for good after ${job.attemptsMade + 1} attempts: ${message}`);
    this.observer.log('error', 'job failed for good', { ...logged, reason: `${logged.reason} (after ${job.attemptsMade + 1} attempts)` });
    return { kind: 'failed', code: error.code, tell: new Error(message) };
  }
}

/** Full jitter, as inside an attempt (tasks/retry.ts), on the scale of --queue-backoff; at least what the peer asked for. */
export function backoffDelay(attemptsMade: number, error: Error | undefined, backoff: unknown, fallbackMs: number, random: () => number = Math.random): number {
  const base =
    typeof backoff === 'object' && backoff !== null && typeof (backoff as { delay?: unknown }).delay === 'number'
      ? (backoff as { delay: number }).delay
      : fallbackMs;
  const ceiling = Math.min(MAX_JOB_BACKOFF_MS, base * 2 ** Math.max(0, attemptsMade - 1));
  const delay = Math.floor(random() * ceiling);
  const asked = error instanceof RetryableRunError ? error.retryAfterMs : null;
  return asked === null ? delay : Math.max(delay, Math.min(asked, MAX_JOB_BACKOFF_MS));
}
