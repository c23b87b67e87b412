// serve's side of the queue: a tasks="background" run is stored as one job before the request is
// answered. The store is asked with a bound (ENQUEUE_TIMEOUT_MS) on a connection without an
// offline queue, so a store that is down gives a prompt 503 (or, with --queue-fallback
// in-process, a local run) rather than a request that hangs. A job is added by one Redis script:
// it is stored whole or not at all. A store that is only stalled may store it after the bound:
// such a job is made void first (fate.ts), so that a request answered without it never runs it.

import { performance } from 'node:perf_hooks';
import type { Queue } from 'bullmq';
import type { Application } from '../compiler/ast.js';
import { describeError } from '../errors.js';
import type { BackgroundRun } from '../runtime/pipeline.js';
import type { TaskKinds } from '../tasks/registry.js';
import { endpointFingerprint } from './fingerprint.js';
import { traceOf } from './job-trace.js';
import { bodyToJob, jobIdFor, sealRun, uploadsToJob, type QueuedRun, type SealedRun } from './job.js';
import type { EnqueueOutcome, QueueObserver } from './observer.js';
import { secretParameterNames } from './reveal.js';
import type { JobFate } from './fate.js';
import { COMPLETED_RETENTION, ENQUEUE_TIMEOUT_MS, VOID_RESERVE_MS, type QueueSettings } from './settings.js';
import { openStore, type Store } from './store.js';

export const BACKOFF_TYPE = 'endpoint-service';

export class QueueProducer {
  private constructor(
    private readonly settings: QueueSettings,
    private readonly store: Store,
    private readonly queue: Queue,
    private readonly kinds: TaskKinds,
    private readonly observer: QueueObserver,
    private readonly health: { readonly up: boolean; stop(): void },
  ) {}

  /** Never fails for a store that is down: the connection keeps trying, and enqueues are refused meanwhile. */
  static async open(settings: QueueSettings, kinds: TaskKinds, observer: QueueObserver): Promise<QueueProducer> {
    const store = await openStore(settings, 'producer', () => {});
    const queue = store.newQueue();
    const health = store.watch(observer);
    return new QueueProducer(settings, store, queue, kinds, observer, health);
  }

  get up(): boolean {
    return this.health.up;
  }

  async enqueue(application: Application, run: BackgroundRun): Promise<EnqueueOutcome> {
    const started = performance.now();
    const { endpoint, requestId } = run;
    const jobId = jobIdFor(requestId, endpoint.name);
    let outcome: EnqueueOutcome;
    // Whether the add was given to the store: before that, a failure leaves nothing to undo.
    let given = false;
    // The add and, when it is not acknowledged, the void share one bound: a 503 within 2 s.
    let deadline = performance.now() + ENQUEUE_TIMEOUT_MS;
    try {
      const sealed: SealedRun = {
        parameters: [...run.scope.parameters],
        system: run.scope.system,
        secret: secretParameterNames(endpoint, this.kinds),
        // <deduplicate>: the worker's tasks derive their downstream keys from the delivery, as in-process ones do.
        ...(run.scope.delivery !== undefined ? { delivery: run.scope.delivery } : {}),
        ...(run.uploads.length > 0 && endpoint.tasks.some((t) => this.kinds.of(t).readsUploads(t)) ? { uploads: await uploadsToJob(run.uploads) } : {}),
        // Only for the endpoint whose own task sends it: a forward's source keeps it for its target.
        ...(run.body !== null && endpoint.tasks.some((t) => this.kinds.of(t).readsRequestBody?.(t) === true) ? { body: await bodyToJob(run.body) } : {}),
      };
      const trace = traceOf(run.span);
      const data: QueuedRun = {
        v: 1,
        endpoint: endpoint.name,
        requestId,
        fingerprint: endpointFingerprint(application, endpoint),
        enqueuedAt: Date.now(),
        sealed: sealRun(this.settings.keys, jobId, sealed),
        ...(trace !== undefined ? { trace } : {}),
      };
      deadline = performance.now() + ENQUEUE_TIMEOUT_MS;
      // Connected (the usual case): no wait, and no timer to bound it.
      if (!this.store.connected() && !(await bounded(this.store.ready(), ENQUEUE_TIMEOUT_MS))) throw new Error('the queue store is unreachable');
      given = true;
      await bounded(
        this.queue.add(endpoint.name, data, {
          jobId,
          attempts: this.settings.attempts,
          backoff: { type: BACKOFF_TYPE, delay: this.settings.backoffMs },
          removeOnComplete: COMPLETED_RETENTION,
          // The store applies it when another job fails; consumers also clean hourly (retention.ts).
          removeOnFail: { age: this.settings.retentionMs / 1000 },
        }),
        Math.max(0, deadline - VOID_RESERVE_MS - performance.now()),
        ENQUEUE_TIMEOUT_MS - VOID_RESERVE_MS,
      );
      outcome = 'queued';
    } catch (error) {
      outcome = await this.undo(jobId, given && !this.store.sentNothing(error), error, { requestId, endpoint: endpoint.name, jobId }, deadline);
    }
    this.observer.enqueued(endpoint.name, outcome, (performance.now() - started) / 1000);
    return outcome;
  }

  /**
   * The store did not take the job in time, or failed: unless the add surely never left this
   * process, it may yet be stored, so the job is settled void (fate.ts) before the request is
   * answered without it. Only a void the store confirmed lets the fallback run the tasks here; a
   * job a consumer started first was queued after all.
   */
  private async undo(
    jobId: string,
    mayLand: boolean,
    error: unknown,
    fields: { requestId: string; endpoint: string; jobId: string },
    deadline: number,
  ): Promise<EnqueueOutcome> {
    const reason = describeError(error);
    const fallback = this.settings.fallback === 'in-process';
    if (!mayLand) {
      this.observer.log('warn', fallback ? 'the queue cannot take the run; running its tasks in this process' : 'the queue cannot take the run; answered 503', {
        ...fields,
        reason,
      });
      return fallback ? 'in-process' : 'refused';
    }
    this.observer.log('warn', 'the queue store did not take the run in time; making the job void so that it never runs', { ...fields, reason });
    const settling = this.store.voidJob(jobId, fields.endpoint, fields.requestId);
    let fate: JobFate;
    try {
      // What is left of the request's bound, VOID_RESERVE_MS when the add took all it was given.
      fate = await bounded(settling, Math.max(0, deadline - performance.now()));
    } catch (voidError) {
      // Still under way: a store that answers it late says whether the job ran after all.
      settling.then(
        (late) => {
          if (late === 'started')
            this.observer.log('error', 'a run answered 503 was started by a worker: the store took the job, then stalled before the void', fields);
        },
        () => {},
      );
      this.observer.log('warn', 'the void of the job is not confirmed; answered 503 without running the tasks here', {
        ...fields,
        reason: describeError(voidError),
      });
      return 'refused';
    }
    if (fate === 'started') {
      this.observer.log('info', 'the queue store took the run late, and a worker has started it: answered as queued', fields);
      return 'queued';
    }
    this.observer.log('warn', fallback ? 'the queue cannot take the run; running its tasks in this process' : 'the queue cannot take the run; answered 503', {
      ...fields,
      reason,
    });
    return fallback ? 'in-process' : 'refused';
  }

  async close(): Promise<void> {
    this.health.stop();
    await this.store.close();
  }
}

/** `said`: the bound the message names, when `ms` is what is left of it. */
function bounded<T>(promise: Promise<T>, ms: number, said: number = ms): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  promise.catch(() => {});
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the queue store did not answer within ${said} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
