// Prometheus metrics. Each process counts its own requests; with workers, a scrape that
// lands on any worker is answered with the sum over all of them, gathered by the primary.

import cluster from 'node:cluster';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import type { TaskOutcomeEvent } from '../runtime/observer.js';

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'endpoint_service_requests_total',
    help: 'Requests answered, by endpoint and status',
    labelNames: ['endpoint', 'status'] as const,
    registers: [this.registry],
  });
  private readonly durations = new Histogram({
    name: 'endpoint_service_request_duration_seconds',
    help: 'Time from the request to the last byte of its response, by endpoint',
    labelNames: ['endpoint'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly tasks = new Counter({
    name: 'endpoint_service_task_outcomes_total',
    help: 'Task outcomes, by endpoint, task, kind and outcome',
    labelNames: ['endpoint', 'task', 'kind', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly taskDurations = new Histogram({
    name: 'endpoint_service_task_duration_seconds',
    help: 'Task duration including retries, by endpoint, task and kind',
    labelNames: ['endpoint', 'task', 'kind'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  constructor() {
    if (cluster.isWorker) {
      // Answers the primary's collection requests with this registry.
      new AggregatorRegistry();
      AggregatorRegistry.setRegistries([this.registry]);
    }
  }

  /** Label children by endpoint (and status): looking them up by label object costs a hash per request. */
  private readonly requestChildren = new Map<string, { inc(): void }>();
  private readonly durationChildren = new Map<string, { observe(value: number): void }>();

  /** `endpoint` is a known endpoint name or a fixed word, never a raw path (unbounded labels). */
  requestAnswered(endpoint: string, status: number, seconds: number): void {
    const key = `${status} ${endpoint}`;
    let counter = this.requestChildren.get(key);
    if (counter === undefined) this.requestChildren.set(key, (counter = this.requests.labels({ endpoint, status: String(status) })));
    counter.inc();
    let histogram = this.durationChildren.get(endpoint);
    if (histogram === undefined) this.durationChildren.set(endpoint, (histogram = this.durations.labels({ endpoint })));
    histogram.observe(seconds);
  }

  taskFinished(event: TaskOutcomeEvent): void {
    this.tasks.inc({ endpoint: event.endpoint, task: event.taskId, kind: event.kind, outcome: event.outcome });
    if (event.outcome !== 'skipped' && event.outcome !== 'not-started') {
      this.taskDurations.observe({ endpoint: event.endpoint, task: event.taskId, kind: event.kind }, event.durationMs / 1000);
    }
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

// Worker side of the exchange with the primary (see primary.ts).
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
