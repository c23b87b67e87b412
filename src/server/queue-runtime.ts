// serve --queue and `worker`: the queue's producer and consumer in one process, their log lines
// and their metrics. The queue code (src/queue/, and with it bullmq and ioredis) is loaded only
// here, and only when a queue is configured.

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Application } from '../compiler/ast.js';
import type { BackgroundRun } from '../runtime/pipeline.js';
import type { TaskKinds } from '../tasks/registry.js';
import { NO_TRACING, type Tracing } from '../tracing.js';
import type { QueueConsumer, RunnableApplication } from '../queue/consumer.js';
import type { EnqueueOutcome, JobFields, QueueObserver, RunOutcome } from '../queue/observer.js';
import type { QueueProducer } from '../queue/producer.js';
import type { QueueSettings } from '../queue/settings.js';
import type { Logger } from './log.js';

/** Extra time after --shutdown-timeout for interrupted jobs to be checkpointed and handed back. */
export const HAND_BACK_MS = 3_000;

/** The exit code of a process whose consumer may not run the queue's jobs, as of a usage error. */
const REFUSED_EXIT_CODE = 2;

/** A consumer that may not run the queue's jobs (src/queue/lock-agreement.ts) has taken none: its process stops at once, with the one line that says why. */
function refuseToRun(line: string): void {
  process.stderr.write(`endpoint-service: error: ${line}\n`);
  process.exit(REFUSED_EXIT_CODE);
}

class QueueMetrics {
  readonly enqueued: Counter<'endpoint' | 'outcome'>;
  readonly enqueueSeconds: Histogram<'endpoint'>;
  readonly runs: Counter<'endpoint' | 'outcome'>;
  readonly waitSeconds: Histogram<'endpoint'>;
  readonly up: Gauge;
  readonly deliveryUnknown: Counter<'endpoint' | 'task'>;
  readonly jobs: Gauge<'state'>;

  constructor(registry: Registry, counts: () => Promise<Record<string, number>>) {
    const registers = [registry];
    this.enqueued = new Counter({
      name: 'endpoint_service_queue_enqueued_total',
      help: 'Background runs handed to the queue, by endpoint and outcome (queued, refused, in-process)',
      labelNames: ['endpoint', 'outcome'],
      registers,
    });
    this.enqueueSeconds = new Histogram({
      name: 'endpoint_service_queue_enqueue_seconds',
      help: 'Time to store a background run in the queue, by endpoint',
      labelNames: ['endpoint'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.runs = new Counter({
      name: 'endpoint_service_queue_runs_total',
      help: 'Queued runs ended in this process, by endpoint and outcome (completed, retrying, failed, interrupted, config-changed, void)',
      labelNames: ['endpoint', 'outcome'],
      registers,
    });
    this.waitSeconds = new Histogram({
      name: 'endpoint_service_queue_wait_seconds',
      help: 'Time from enqueue to the first start of a run, by endpoint',
      labelNames: ['endpoint'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.up = new Gauge({ name: 'endpoint_service_queue_up', help: '1 when the queue store answers, else 0', registers });
    this.deliveryUnknown = new Counter({
      name: 'endpoint_service_email_delivery_unknown_total',
      help: 'Mail messages left being sent by a crash and not sent again, by endpoint and task',
      labelNames: ['endpoint', 'task'],
      registers,
    });
    let cached: { at: number; counts: Record<string, number> } | null = null;
    this.jobs = new Gauge({
      name: 'endpoint_service_queue_jobs',
      help: 'Jobs in the queue by state (queue-wide: take max() over instances), refreshed at most every 5 s',
      labelNames: ['state'],
      registers,
      async collect() {
        if (cached === null || Date.now() - cached.at > 5_000) {
          try {
            cached = { at: Date.now(), counts: await counts() };
          } catch {
            return;
          }
        }
        for (const [state, n] of Object.entries(cached.counts)) this.set({ state }, n);
      },
    });
  }
}

export class QueueRuntime {
  private producer: QueueProducer | null = null;
  private consumer: QueueConsumer | null = null;
  private readonly ready: Promise<void>;
  private readonly metrics: QueueMetrics;
  private readonly observer: QueueObserver;

  /**
   * Opens the producer (serve) and the consumer (serve without --no-queue-consume, and `worker`).
   * A store that is down is not an error: the connections keep trying and say so in the log.
   */
  constructor(
    readonly settings: QueueSettings,
    logger: Logger,
    registry: Registry,
    kinds: TaskKinds,
    roles: { readonly produce: boolean; readonly consume: boolean },
    current: () => RunnableApplication,
    /** The process's tracing: the consumer gives each job's run a span in its request's trace. */
    tracing: Tracing = NO_TRACING,
  ) {
    this.metrics = new QueueMetrics(registry, async () => ((this.producer ?? this.consumer) === null ? {} : await this.counts()));
    const metrics = this.metrics;
    const observer: QueueObserver = {
      log: (level, message, fields) => logger.log(level, message, fields),
      enqueued(endpoint: string, outcome: EnqueueOutcome, seconds: number) {
        metrics.enqueued.inc({ endpoint, outcome });
        if (outcome === 'queued') metrics.enqueueSeconds.observe({ endpoint }, seconds);
      },
      started(job: JobFields, waitSeconds: number | null) {
        if (waitSeconds !== null) metrics.waitSeconds.observe({ endpoint: job.endpoint }, waitSeconds);
      },
      finished(job: JobFields, outcome: RunOutcome) {
        metrics.runs.inc({ endpoint: job.endpoint, outcome });
      },
      deliveryUnknown(job: JobFields, task: string) {
        metrics.deliveryUnknown.inc({ endpoint: job.endpoint, task });
      },
      storeUp: (up) => metrics.up.set(up ? 1 : 0),
    };
    this.observer = observer;
    this.ready = (async () => {
      const [{ QueueProducer }, { QueueConsumer }] = await Promise.all([import('../queue/producer.js'), import('../queue/consumer.js')]);
      if (roles.produce) this.producer = await QueueProducer.open(settings, kinds, observer);
      if (roles.consume) this.consumer = await QueueConsumer.open(settings, current, observer, !roles.produce, tracing, refuseToRun);
    })();
    this.ready.catch((error: unknown) => logger.log('error', 'the queue could not be started', { error: String(error) }));
  }

  /** serve's PipelineContext.enqueueTasks. */
  readonly enqueue = async (application: Application, run: BackgroundRun): Promise<EnqueueOutcome> => {
    await this.ready;
    return this.producer!.enqueue(application, run);
  };

  /** For /_health: whether the store answers (a queue that is down does not make the instance unhealthy). */
  get up(): boolean {
    return this.producer?.up ?? this.consumer?.up ?? false;
  }

  private async counts(): Promise<Record<string, number>> {
    const { openStore } = await import('../queue/store.js');
    // A short-lived admin connection would cost a connect per scrape: keep one.
    this.countStore ??= openStore(this.settings, 'admin', () => {}).then((store) => ({ store, queue: store.newQueue() }));
    const { queue } = await this.countStore;
    return (await queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed')) as Record<string, number>;
  }

  private countStore: Promise<{ store: { close(): Promise<void> }; queue: { getJobCounts(...states: string[]): Promise<Record<string, number>> } }> | null =
    null;

  /** Shutdown: no new jobs; running ones get `timeoutMs`, then are handed back. The producer closes last. */
  async drain(timeoutMs: number): Promise<void> {
    await this.ready.catch(() => {});
    await this.consumer?.drain(timeoutMs);
    await this.producer?.close();
    if (this.countStore !== null) await (await this.countStore.catch(() => null))?.store.close();
  }
}
