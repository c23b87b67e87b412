// `endpoint-service jobs`: the failed set and its remedies, read from the job records. What is
// shown is what the store holds in clear and holds no value of the request (endpoint, request id,
// task outcomes and error codes, mail markers); the sealed request data and the error texts,
// which may hold values (a path, a recipient), are opened only for `jobs show --reveal` (reveal.ts).

import type { Job, Queue } from 'bullmq';
import type { QueuedRun, RunProgress, TaskRecord } from './job.js';
import { jobRecord } from './job.js';
import { revealErrors, revealParameters, type RevealedParameters } from './reveal.js';
import type { QueueKey } from './seal.js';
import type { QueueSettings } from './settings.js';
import { openStore, type Store } from './store.js';

export const JOB_STATES = ['failed', 'waiting', 'active', 'delayed', 'completed'] as const;
export type JobStateName = (typeof JOB_STATES)[number];

export interface JobSummary {
  readonly jobId: string;
  readonly requestId: string;
  readonly endpoint: string;
  readonly state: string;
  /**
   * Attempts started, the running one included: each run of the job, whether it ended, was
   * handed back or was cut off by a crash (its history has a line for each), across `jobs retry`.
   */
  readonly attempts: number;
  readonly enqueuedAt: string;
  readonly finishedAt: string | null;
  /** The first task recorded failed, and its error code. */
  readonly failedTask: string | null;
  readonly code: string | null;
  /** Why the job failed, without values: the failed task and its code, or why the job could not run. */
  readonly error: string | null;
  readonly fingerprint: string;
}

/** A task's record as shown: the error text only when revealed. */
export interface TaskShown {
  readonly outcome: TaskRecord['outcome'];
  readonly attempts: number;
  readonly code?: string;
  readonly at: number;
}

export interface JobDetail extends JobSummary {
  readonly tasks: Record<string, TaskShown>;
  readonly mail: RunProgress['mail'];
  /** Messages a crash left being sent and that were not sent again (not-sent ones are certain, and not among them). */
  readonly deliveryUnknown: readonly { readonly task: string; readonly message: number; readonly messageId: string }[];
  readonly config: RunProgress['config'] | null;
  readonly log: readonly string[];
}

export class JobsAdmin {
  private constructor(
    private readonly store: Store,
    private readonly queue: Queue,
  ) {}

  /** Fails (rather than waiting) when the store cannot be reached. */
  static async open(settings: Pick<QueueSettings, 'url' | 'backend' | 'name'> & Partial<QueueSettings>): Promise<JobsAdmin> {
    let lastError: Error | null = null;
    const store = await openStore(settings as QueueSettings, 'admin', (error) => (lastError = error));
    try {
      await store.ping();
    } catch (error) {
      await store.close();
      throw lastError ?? error;
    }
    return new JobsAdmin(store, store.newQueue());
  }

  async list(state: JobStateName, limit: number): Promise<JobSummary[]> {
    const jobs = (await this.queue.getJobs([state], 0, limit - 1)) as Job[];
    return Promise.all(jobs.filter((j) => j !== undefined && j !== null).map((j) => this.summary(j, state)));
  }

  /** The jobs of a request (a forward makes two), or the job with this id. */
  async find(id: string): Promise<Job[]> {
    if (id.includes('.')) {
      const job = (await this.queue.getJob(id)) as Job | undefined;
      return job === undefined ? [] : [job];
    }
    const found: Job[] = [];
    const batch = 1000;
    for (const state of JOB_STATES) {
      for (let start = 0; ; start += batch) {
        const jobs = (await this.queue.getJobs([state], start, start + batch - 1)) as Job[];
        for (const job of jobs) if ((job?.data as QueuedRun | undefined)?.requestId === id) found.push(job);
        if (jobs.length < batch) break;
      }
    }
    return found;
  }

  async detail(job: Job): Promise<JobDetail> {
    const state = await job.getState();
    const progress = jobRecord(job);
    const deliveryUnknown = Object.entries(progress.mail).flatMap(([task, messages]) =>
      Object.entries(messages).flatMap(([index, record]) =>
        record.state === 'unknown' || record.state === 'sending' ? [{ task, message: Number(index) + 1, messageId: record.messageId }] : [],
      ),
    );
    const { logs } = await this.queue.getJobLogs(job.id!);
    const tasks = Object.fromEntries(
      Object.entries(progress.tasks).map(([id, r]) => [
        id,
        { outcome: r.outcome, attempts: r.attempts, ...(r.code !== undefined ? { code: r.code } : {}), at: r.at } satisfies TaskShown,
      ]),
    );
    return { ...(await this.summary(job, state)), tasks, mail: progress.mail, deliveryUnknown, config: progress.config ?? null, log: logs };
  }

  /** The error texts of the job's tasks, by task id; throws SealError when `keys` cannot open them. */
  revealErrors(job: Job, keys: readonly QueueKey[]): Record<string, string> {
    return revealErrors(keys, job.id!, jobRecord(job));
  }

  /** The job's bound parameters, secrets masked; throws SealError when `keys` cannot open them. */
  reveal(job: Job, keys: readonly QueueKey[]): RevealedParameters {
    return revealParameters(keys, job.id!, job.data as QueuedRun);
  }

  async failed(): Promise<Job[]> {
    return ((await this.queue.getJobs(['failed'], 0, -1)) as Job[]).filter((j) => j !== undefined && j !== null);
  }

  /** Back to waiting: the next run does only the tasks that did not succeed. */
  async retry(job: Job): Promise<void> {
    // attemptsMade is what the retry limit counts: reset. attemptsStarted is what `jobs` shows
    // as the job's attempts: kept, so the count goes on from the history before the retry.
    await job.retry('failed', { resetAttemptsMade: true });
  }

  async discard(job: Job): Promise<void> {
    await job.remove();
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  private async summary(job: Job, state: string): Promise<JobSummary> {
    const data = job.data as QueuedRun;
    const progress = jobRecord(job);
    // A completed job carries no error: an earlier attempt's failure is history (the job's log),
    // and a record written by a version that left the last outcome unwritten may still say failed.
    const completed = state === 'completed';
    const failed = completed ? undefined : Object.entries(progress.tasks).find(([, r]) => r.outcome === 'failed');
    return {
      jobId: job.id!,
      requestId: data.requestId,
      endpoint: data.endpoint,
      state,
      // attemptsMade counts only the attempts that ended (not the running one, a hand-back or a
      // stall), and is reset by `jobs retry` so that the retried job gets its attempts again.
      attempts: Math.max(job.attemptsStarted ?? 0, job.attemptsMade),
      enqueuedAt: new Date(data.enqueuedAt).toISOString(),
      finishedAt: job.finishedOn !== undefined ? new Date(job.finishedOn).toISOString() : null,
      failedTask: failed?.[0] ?? null,
      code: failed?.[1].code ?? null,
      // The failed reason of a task failure was the task's text before it was sealed: said anew.
      error: completed
        ? null
        : failed !== undefined
          ? `task "${failed[0]}" failed${failed[1].code !== undefined ? ` (${failed[1].code})` : ''}`
          : job.failedReason || null,
      fingerprint: data.fingerprint,
    };
  }
}
