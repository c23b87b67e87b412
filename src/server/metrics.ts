// Prometheus metrics. Each process counts its own requests; with workers, a scrape that
// lands on any worker is answered with the sum over all of them, gathered by the primary.

import cluster from 'node:cluster';
import { AggregatorRegistry, Counter, type Histogram, Registry } from 'prom-client';
import type { TaskOutcomeEvent } from '../runtime/observer.js';
import type { BodyBudget } from './body/budget.js';
import type { UploadSpool } from './body/spool.js';

const REQUEST_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

/** What prom-client's registries read from a metric: its `get()` (see prom-client's Counter and Histogram). */
interface MetricValue {
  readonly labels: Record<string, string | number>;
  readonly value: number;
  readonly metricName?: string;
}

interface EndpointRequests {
  readonly byStatus: Map<number, number>;
  /** Observations per bucket, not cumulative; the last slot is above every bound. */
  readonly buckets: number[];
  sum: number;
  count: number;
}

/**
 * Request counts and durations, the two metrics written on every request, kept in plain maps
 * and arrays and shaped as prom-client metrics only when scraped. prom-client's own inc() and
 * observe() hash and validate the label object on every call, even through a labels() child,
 * which showed in the profile of the cheapest request (docs/performance.md, "Request metrics").
 */
class RequestMetrics {
  private readonly endpoints = new Map<string, EndpointRequests>();

  record(endpoint: string, status: number, seconds: number): void {
    let e = this.endpoints.get(endpoint);
    if (e === undefined) {
      e = { byStatus: new Map(), buckets: new Array<number>(REQUEST_DURATION_BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
      this.endpoints.set(endpoint, e);
    }
    e.byStatus.set(status, (e.byStatus.get(status) ?? 0) + 1);
    let i = 0;
    while (i < REQUEST_DURATION_BUCKETS.length && seconds > REQUEST_DURATION_BUCKETS[i]!) i++;
    e.buckets[i]!++;
    e.sum += seconds;
    e.count++;
  }

  /** The counter endpoint_service_requests_total, as prom-client's Counter would give it. */
  readonly counter = {
    name: 'endpoint_service_requests_total',
    help: 'Requests answered, by endpoint and status',
    type: 'counter',
    aggregator: 'sum',
    get: async () => {
      const values: MetricValue[] = [];
      for (const [endpoint, e] of this.endpoints) {
        for (const [status, value] of e.byStatus) values.push({ labels: { endpoint, status: String(status) }, value });
      }
      return { name: this.counter.name, help: this.counter.help, type: this.counter.type, aggregator: this.counter.aggregator, values };
    },
  };

  /** The histogram endpoint_service_request_duration_seconds, as prom-client's Histogram would give it. */
  readonly histogram = {
    name: 'endpoint_service_request_duration_seconds',
    help: 'Time from the request to the last byte of its response, by endpoint',
    type: 'histogram',
    aggregator: 'sum',
    get: async () => {
      const name = this.histogram.name;
      const values: MetricValue[] = [];
      for (const [endpoint, e] of this.endpoints) {
        let cumulative = 0;
        REQUEST_DURATION_BUCKETS.forEach((le, i) => {
          cumulative += e.buckets[i]!;
          values.push({ labels: { le, endpoint }, value: cumulative, metricName: `${name}_bucket` });
        });
        values.push({ labels: { le: '+Inf', endpoint }, value: e.count, metricName: `${name}_bucket` });
        values.push({ labels: { endpoint }, value: e.sum, metricName: `${name}_sum` });
        values.push({ labels: { endpoint }, value: e.count, metricName: `${name}_count` });
      }
      return { name, help: this.histogram.help, type: this.histogram.type, aggregator: this.histogram.aggregator, values };
    },
  };
}

const TASK_DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

/** One task of one endpoint: its label set, bound once (its kind is the task's). */
interface TaskCounts {
  readonly kind: string;
  readonly outcomes: Map<string, number>;
  readonly codes: Map<string, number>;
  /** Observations per bucket, not cumulative; the last slot is above every bound. */
  readonly buckets: number[];
  sum: number;
  count: number;
}

/**
 * Task outcomes, failures and durations, written after every task, kept as RequestMetrics keeps
 * requests: per endpoint and task in plain maps, shaped as prom-client metrics only when
 * scraped (prom-client hashed the label object of every call: 2.7% of a worker's CPU per job).
 */
class TaskMetrics {
  private readonly endpoints = new Map<string, Map<string, TaskCounts>>();

  record(event: TaskOutcomeEvent): void {
    let tasks = this.endpoints.get(event.endpoint);
    if (tasks === undefined) this.endpoints.set(event.endpoint, (tasks = new Map()));
    let t = tasks.get(event.taskId);
    if (t === undefined) {
      t = { kind: event.kind, outcomes: new Map(), codes: new Map(), buckets: new Array<number>(TASK_DURATION_BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
      tasks.set(event.taskId, t);
    }
    t.outcomes.set(event.outcome, (t.outcomes.get(event.outcome) ?? 0) + 1);
    if (event.code !== undefined) t.codes.set(event.code, (t.codes.get(event.code) ?? 0) + 1);
    if (event.outcome === 'skipped' || event.outcome === 'not-started') return;
    const seconds = event.durationMs / 1000;
    let i = 0;
    while (i < TASK_DURATION_BUCKETS.length && seconds > TASK_DURATION_BUCKETS[i]!) i++;
    t.buckets[i]!++;
    t.sum += seconds;
    t.count++;
  }

  private each(f: (endpoint: string, task: string, counts: TaskCounts) => void): void {
    for (const [endpoint, tasks] of this.endpoints) for (const [task, counts] of tasks) f(endpoint, task, counts);
  }

  private metric(name: string, help: string, type: 'counter' | 'histogram', values: () => MetricValue[]) {
    return { name, help, type, aggregator: 'sum', get: async () => ({ name, help, type, aggregator: 'sum', values: values() }) };
  }

  readonly outcomes = this.metric('endpoint_service_task_outcomes_total', 'Task outcomes, by endpoint, task, kind and outcome', 'counter', () => {
    const values: MetricValue[] = [];
    this.each((endpoint, task, t) => {
      for (const [outcome, value] of t.outcomes) values.push({ labels: { endpoint, task, kind: t.kind, outcome }, value });
    });
    return values;
  });

  // Its own metric rather than a label of the outcomes: their label set is what dashboards
  // already select on, and a code exists only for failures.
  readonly failures = this.metric(
    'endpoint_service_task_failures_total',
    'Task failures (counting or ignored), by endpoint, task, kind and error code',
    'counter',
    () => {
      const values: MetricValue[] = [];
      this.each((endpoint, task, t) => {
        for (const [code, value] of t.codes) values.push({ labels: { endpoint, task, kind: t.kind, code }, value });
      });
      return values;
    },
  );

  readonly durations = this.metric('endpoint_service_task_duration_seconds', 'Task duration including retries, by endpoint, task and kind', 'histogram', () => {
    const name = 'endpoint_service_task_duration_seconds';
    const values: MetricValue[] = [];
    this.each((endpoint, task, t) => {
      if (t.count === 0) return;
      const { kind } = t;
      let cumulative = 0;
      TASK_DURATION_BUCKETS.forEach((le, i) => {
        cumulative += t.buckets[i]!;
        values.push({ labels: { le, endpoint, task, kind }, value: cumulative, metricName: `${name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', endpoint, task, kind }, value: t.count, metricName: `${name}_bucket` });
      values.push({ labels: { endpoint, task, kind }, value: t.sum, metricName: `${name}_sum` });
      values.push({ labels: { endpoint, task, kind }, value: t.count, metricName: `${name}_count` });
    });
    return values;
  });
}

function registeredTasks(metrics: TaskMetrics, registry: Registry): TaskMetrics {
  for (const metric of [metrics.outcomes, metrics.failures, metrics.durations]) registry.registerMetric(metric as unknown as Counter);
  return metrics;
}

/** Registered first, so a scrape lists request metrics before task metrics, as it always has. */
function registered(metrics: RequestMetrics, registry: Registry): RequestMetrics {
  // The registry only calls get() on what it holds; its typings ask for one of prom-client's classes.
  registry.registerMetric(metrics.counter as unknown as Counter);
  registry.registerMetric(metrics.histogram as unknown as Histogram);
  return metrics;
}

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests = registered(new RequestMetrics(), this.registry);
  private readonly tasks = registeredTasks(new TaskMetrics(), this.registry);

  private readonly guards = new Counter({
    name: 'endpoint_service_guard_outcomes_total',
    help: 'Requests stopped or let through by a protection (honeypot, rate-limit, captcha), by endpoint, check and outcome',
    labelNames: ['endpoint', 'check', 'outcome'] as const,
    registers: [this.registry],
  });

  // Receiving webhooks: deliveries refused by their <signature> or <handshake>, by reason.
  private readonly webhookRefusals = new Counter({
    name: 'endpoint_service_webhook_refusals_total',
    help: 'Webhook deliveries refused by a <signature> (401) or an invalid <handshake> (400, 403), by endpoint and reason',
    labelNames: ['endpoint', 'reason'] as const,
    registers: [this.registry],
  });

  private readonly deduplications = new Counter({
    name: 'endpoint_service_deduplicated_total',
    help: 'Requests to an endpoint with <deduplicate> not run as new: replayed, in-flight (409), mismatch (422), or store-down (run without deduplication)',
    labelNames: ['endpoint', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly deduplicationEvictions = new Counter({
    name: 'endpoint_service_deduplication_evictions_total',
    help: 'Remembered <deduplicate> answers evicted, oldest first, to keep the store within its bound (10000 answers and 64 MiB; in Redis per endpoint)',
    registers: [this.registry],
  });

  private readonly deliveriesDropped = new Counter({
    name: 'endpoint_service_deliveries_dropped_total',
    help: 'Deliveries and task updates the delivery log could not write (its store down, slow or full); the requests themselves were answered',
    registers: [this.registry],
  });

  constructor() {
    if (cluster.isWorker) {
      // Answers the primary's collection requests with this registry.
      new AggregatorRegistry();
      AggregatorRegistry.setRegistries([this.registry]);
    }
  }

  /** `endpoint` is a known endpoint name or a fixed word, never a raw path (unbounded labels). */
  requestAnswered(endpoint: string, status: number, seconds: number): void {
    this.requests.record(endpoint, status, seconds);
  }

  taskFinished(event: TaskOutcomeEvent): void {
    this.tasks.record(event);
  }

  deliveriesNotRecorded(count: number): void {
    this.deliveriesDropped.inc(count);
  }

  /** Temporary upload files: read from the spool when scraped. */
  watchUploads(spool: UploadSpool): void {
    this.gauge('endpoint_service_upload_temporary_files', 'Temporary files of uploads kept for tasks that exist now', () => spool.fileCount);
  }

  /** Request bodies held in memory, the limit, and bodies refused for want of room. */
  watchBodyBudget(budget: BodyBudget): void {
    this.gauge(
      'endpoint_service_request_body_bytes_in_flight',
      'Bytes of request bodies held in memory now, counted against --max-inflight-body-size',
      () => budget.bytesInFlight,
    );
    this.gauge('endpoint_service_request_body_bytes_limit', 'The --max-inflight-body-size of the process (summed over workers)', () => budget.limit);
    this.gauge('endpoint_service_request_body_waiting', 'Request bodies waiting for room in --max-inflight-body-size now', () => budget.waiting);
    this.gauge(
      'endpoint_service_request_body_refusals_total',
      'Requests answered 503 because their body did not fit in --max-inflight-body-size',
      () => budget.refusals,
      'counter',
    );
  }

  /** A metric read from its owner when scraped, shaped as prom-client's own (see RequestMetrics) and summed over workers like them. */
  private gauge(name: string, help: string, value: () => number, type: 'gauge' | 'counter' = 'gauge'): void {
    const metric = {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: [{ labels: {}, value: value() }] }),
    };
    this.registry.registerMetric(metric as unknown as Counter);
  }

  guardNoted(endpoint: string, check: string, outcome: string): void {
    this.guards.inc({ endpoint, check, outcome });
  }

  webhookRefused(endpoint: string, reason: string): void {
    this.webhookRefusals.inc({ endpoint, reason });
  }

  deduplicated(endpoint: string, outcome: string): void {
    this.deduplications.inc({ endpoint, outcome });
  }

  deduplicationEvicted(count: number): void {
    this.deduplicationEvictions.inc(count);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** This process's metrics, or with workers the sum over all of them. */
  async render(): Promise<string> {
    if (!cluster.isWorker || process.send === undefined) return this.registry.metrics();
    return requestClusterMetrics();
  }
}

// Worker side of the exchange with the primary (see cluster/primary.ts).
export const METRICS_REQUEST = 'endpoint-service:metrics-request';
export const METRICS_RESPONSE = 'endpoint-service:metrics-response';

let nextMetricsRequest = 0;
const pendingMetrics = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();
let listening = false;

function requestClusterMetrics(): Promise<string> {
  if (!listening) {
    listening = true;
    process.on('message', (message: unknown) => {
      const m = message as { type?: unknown; id?: unknown; text?: unknown; error?: unknown };
      if (m?.type !== METRICS_RESPONSE || typeof m.id !== 'number') return;
      const pending = pendingMetrics.get(m.id);
      if (pending === undefined) return;
      pendingMetrics.delete(m.id);
      if (typeof m.text === 'string') pending.resolve(m.text);
      else pending.reject(new Error(typeof m.error === 'string' ? m.error : 'metrics collection failed'));
    });
  }
  const id = nextMetricsRequest++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pendingMetrics.delete(id);
      reject(new Error('the primary process did not answer the metrics request within 10s'));
    }, 10_000);
    timer.unref();
    pendingMetrics.set(id, {
      resolve: (text) => (clearTimeout(timer), resolve(text)),
      reject: (error) => (clearTimeout(timer), reject(error)),
    });
    process.send!({ type: METRICS_REQUEST, id });
  });
}
