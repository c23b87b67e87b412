// A job's progress record (its checkpoint): the outcome of each task and the intermediate values
// (sealed), and a marker around each mail message, written one write at a time and fenced in the
// store by the job's lock, so a retried or recovered job runs only what is unfinished and a worker
// held up past its lock writes nothing over the record of the one that took the job over.

import type { Job } from 'bullmq';
import { describeError } from '../errors.js';
import type { Task } from '../compiler/ast.js';
import type { DurableRun, ResumeState, TaskReport } from '../runtime/task-runner.js';
import { TaskError } from '../tasks/errors.js';
import type { EffectLedger } from '../tasks/kind.js';
import { sealIntermediate, sealTaskError, type QueuedRun, type RunProgress } from './job.js';
import type { JobFields, QueueObserver } from './observer.js';
import type { QueueSettings } from './settings.js';
import type { Store } from './store.js';

/** The job's progress record, written after each task outcome and around each mail message, one write at a time. */
export class Checkpoint implements DurableRun {
  private chain: Promise<boolean> = Promise.resolve(true);
  private closed = false;
  /** The fence found the job's lock held by another worker: this one sends and records nothing more. */
  lost = false;
  constructor(
    private readonly job: Job<QueuedRun>,
    private readonly token: string | undefined,
    private readonly store: Store,
    private readonly progress: RunProgress,
    private readonly intermediate: Map<string, string>,
    private readonly settings: QueueSettings,
    private readonly observer: QueueObserver,
    private readonly fields: JobFields,
    /** How many task outcomes this run reports (the tasks not finished before it). */
    private readonly toReport: number,
    /** Tasks an earlier run finished: not run again. */
    finished: ReadonlySet<string>,
  ) {
    this.resume = { finished, intermediate };
  }

  /** Where the run stands: what the task engine takes up. */
  readonly resume: ResumeState;

  /** Outcomes reported in this run. */
  private reported = 0;
  /** An outcome is recorded in memory and waits for the end of the run to be written. */
  private unwritten = false;

  /**
   * True while this worker holds the job, its lock renewed for a whole lock duration: asked before
   * a message is sent, so that a worker whose lock has passed to another (it was held up: a paused
   * event loop, a stopped process) sends nothing. A lock found lost closes the checkpoint for good.
   */
  private async holdsLock(): Promise<boolean> {
    if (this.lost) return false;
    const extended = this.token === undefined ? 0 : await this.job.extendLock(this.token, this.settings.lockDurationMs).catch(() => 0);
    if (extended === 1) return true;
    this.lost = true;
    this.close();
    return false;
  }

  recorded(report: TaskReport): void {
    const { task, outcome, attempts, error, reason } = report;
    const text = error?.message ?? reason;
    this.progress.tasks[task.id] = {
      outcome,
      attempts,
      at: Date.now(),
      ...(error !== undefined ? { code: error.code } : {}),
      ...(text !== undefined ? { sealedError: sealTaskError(this.settings.keys, this.job.id!, task.id, text) } : {}),
    };
    if (report.outputs !== undefined && report.outputs.size > 0) {
      for (const [name, value] of report.outputs) this.intermediate.set(name, value);
      this.progress.sealedIntermediate = sealIntermediate(this.settings.keys, this.job.id!, this.intermediate);
    }
    // The run's last outcome is written when the run ends: with the job's completion when it
    // succeeded (completing()), else by flush(). A crash before then runs the last task again,
    // as a crash before its write would have: the window is one store round trip either way.
    if (++this.reported >= this.toReport) this.unwritten = true;
    else this.writeSoon();
  }

  /**
   * A task outcome is written a tick later, so outcomes reported together (a stage's tasks, a
   * failure and the tasks it leaves not started) make one write.
   */
  private writeSoon(): void {
    if (this.pending !== null) return;
    this.pending = setImmediate(() => {
      this.pending = null;
      void this.write();
    });
  }

  private pending: NodeJS.Immediate | null = null;

  effects(task: Task): EffectLedger {
    return this.ledger(task.id);
  }

  ledger(taskId: string): EffectLedger {
    // Made on the first message: tasks that send no mail leave no record.
    const records = () => (this.progress.mail[taskId] ??= {});
    return {
      before: async (step, messageId) => {
        const mail = records();
        // A message an earlier run certainly did not send is as good as new.
        const previous = mail[step]?.state === 'not-sent' ? undefined : mail[step];
        if (previous?.state === 'sent') return 'done';
        if (previous !== undefined && this.settings.emailRedelivery === 'at-most-once') {
          if (previous.state === 'sending') {
            mail[step] = { ...previous, state: 'unknown', at: Date.now() };
            await this.write();
            this.observer.log(
              'warn',
              'delivery-unknown: a crash left this message being sent; it is not sent again (--email-redelivery at-least-once would resend it)',
              {
                ...this.fields,
                task: taskId,
                message: step + 1,
                messageId: previous.messageId,
              },
            );
            this.observer.deliveryUnknown(this.fields, taskId);
          }
          return 'unknown';
        }
        // The fence: a worker whose lock has passed to another must not send.
        if (!(await this.holdsLock())) return 'lost';
        mail[step] = { state: 'sending', messageId, at: Date.now() };
        if (!(await this.write()))
          throw new TaskError('the sending marker could not be written to the queue; not sent', { code: 'connection', transient: true });
        return 'go';
      },
      after: async (step) => {
        const mail = records();
        mail[step] = { ...mail[step]!, state: 'sent', at: Date.now() };
        await this.write();
      },
      notDone: async (step) => {
        const mail = records();
        mail[step] = { ...mail[step]!, state: 'not-sent', at: Date.now() };
        await this.write();
      },
    };
  }

  flush(): Promise<boolean> {
    if (this.pending !== null || this.unwritten) void this.write();
    return this.chain;
  }

  /**
   * The run succeeded: the record to complete the job with, once the writes under way have
   * landed; null when one of them found the job taken over. The completion is fenced as the
   * writes are: BullMQ completes a job only for the token that holds its lock, so a worker held
   * up past its lock completes nothing over the record of the one that took the job over. The
   * checkpoint is closed either way.
   */
  async completing(): Promise<RunProgress | null> {
    if (this.pending !== null) {
      clearImmediate(this.pending);
      this.pending = null;
    }
    await this.chain;
    this.close();
    return this.lost ? null : this.progress;
  }

  /** The job is leaving this worker: later outcomes must not overwrite another worker's record. */
  close(): void {
    this.closed = true;
  }

  private write(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (this.pending !== null) {
      clearImmediate(this.pending);
      this.pending = null;
    }
    this.unwritten = false;
    // The record as it stands now, as the store takes it: JSON text is the snapshot, with no copy made first.
    const snapshot = JSON.stringify(this.progress);
    this.chain = this.chain.then(async () => {
      if (this.lost) return false;
      try {
        // Fenced in the store: a worker held up past its lock writes nothing over the record of the one that took the job over.
        const written =
          this.token === undefined
            ? (await this.job.updateProgress(JSON.parse(snapshot) as object), true)
            : await this.store.writeProgress(this.job.id!, this.token, snapshot);
        if (!written) {
          this.lost = true;
          this.close();
        }
        return written;
      } catch (error) {
        this.observer.log('warn', 'the checkpoint could not be written', { ...this.fields, reason: describeError(error) });
        return false;
      }
    });
    return this.chain;
  }
}
