// `endpoint-service worker`: a process that runs queued task runs only. It compiles the same
// endpoints.xml as serve, runs jobs on the same task engine, and answers /_health and /_metrics
// on its own port. SIGTERM drains: no new jobs, running ones get --shutdown-timeout, the rest are
// checkpointed and handed back to the queue for another worker.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Application } from '../compiler/ast.js';
import { describeError } from '../errors.js';
import { LoadedApplication } from '../runtime/loaded.js';
import type { RuntimeObserver, TaskOutcomeEvent } from '../runtime/observer.js';
import type { QueueSettings } from '../queue/settings.js';
import { TASK_KINDS } from '../tasks/registry.js';
import type { TaskSettings } from '../tasks/settings.js';
import { NO_TRACING, type Tracing } from '../tracing.js';
import { formatDuration } from '../units.js';
import type { Logger } from './log.js';
import { ServiceMetrics } from './metrics.js';
import { originOf } from './options.js';
import { HAND_BACK_MS, QueueRuntime } from './queue-runtime.js';
import { manageLifecycle, retire } from './lifecycle.js';
import { watchApplication, type Compiler } from './watch.js';
import { listenFailure, LISTEN_FAILED_EXIT_CODE } from './listen-failure.js';
import type { DeliveryStoreLocation } from '../deliveries/settings.js';
import type { DeliveryLog } from '../deliveries/log.js';
import { openTaskUpdates } from './delivery-log/runtime.js';
import { taskRecord } from './delivery-log/recording.js';
import { adminHandler, loginUrlOf, type AdminHandler } from '../admin/server.js';
import { adminToken, TOKEN_ENV } from '../admin/auth.js';
import { deliveriesKey } from '../deliveries/key.js';

export const WORKER_READY_PREFIX = 'endpoint-service worker listening on ';

export interface WorkerSettings {
  readonly file: string;
  readonly port: number;
  readonly host: string;
  /** The task options, as serve's: the queue must not be a way around --deny-private-addresses or --allow-task-host. */
  readonly tasks: TaskSettings;
  readonly shutdownTimeoutMs: number;
  readonly watch: boolean;
  readonly queue: QueueSettings;
  /** The delivery log serve records in: the worker adds its task outcomes; null: not recorded. */
  readonly deliveries: DeliveryStoreLocation | null;
}

/** `tracing`: on with --otel (server/otel.ts); each job's run is then a span in its request's trace. */
export function runWorker(
  settings: WorkerSettings,
  logger: Logger,
  application: Application,
  compile: Compiler,
  env: Readonly<Record<string, string | undefined>>,
  tracing: Tracing = NO_TRACING,
): void {
  const metrics = new ServiceMetrics();
  let deliveries: DeliveryLog | null = null;
  // The deliveries page shares this listener with /_health and /_metrics: a worker's one admin listener.
  let page: AdminHandler | null = null;
  const madeToken = (process.env[TOKEN_ENV] ?? '').trim() === '';
  const token = adminToken(process.env);
  const opening = openTaskUpdates(settings.deliveries, logger, metrics).then((log) => {
    deliveries = log;
    if (log === null || settings.deliveries === null) return;
    const key = deliveriesKey(env, settings.deliveries.kind === 'sqlite' ? settings.deliveries.stateDir : null, false);
    page = adminHandler({
      store: log.store,
      keys: key.kind === 'key' ? key.keys : null,
      token,
      queue: settings.queue,
      example: () => null,
      endpoints: current.application.endpoints.map((e) => e.name),
      log: (level, message, fields) => logger.log(level, message, fields),
    });
  });
  const observer: RuntimeObserver = {
    taskFinished(event: TaskOutcomeEvent) {
      metrics.taskFinished(event);
      deliveries?.add({ kind: 'task', delivery: event.requestId, task: taskRecord(event) });
      // A task that went as planned is in its job's one line (`job completed`, with every task's outcome).
      if (event.outcome === 'failed' || event.outcome === 'ignored-failure') logTaskProblem(logger, event);
    },
    warn: (message, fields) => logger.log('warn', message, fields),
  };
  const load = (app: Application) =>
    new LoadedApplication(app, {
      env,
      observer,
      upstreamTimeoutMs: 60_000,
      kinds: TASK_KINDS,
      taskSettings: settings.tasks,
    });
  let current = load(application);
  const retired = new Set<LoadedApplication>();
  const queue = new QueueRuntime(settings.queue, logger, metrics.registry, TASK_KINDS, { produce: false, consume: true }, () => current, tracing);
  let shuttingDown = false;

  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    if (path !== '/_health' && path !== '/_metrics' && page !== null) return page.handle(request, response);
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed\n');
    if (path === '/_health') {
      if (shuttingDown) return send(503, 'application/json', '{"status":"shutting down"}');
      return send(200, 'application/json', `{"status":"ok","queue":"${queue.up ? 'up' : 'unreachable'}","running":${current.runningTaskRuns}}`);
    }
    if (path === '/_metrics') {
      metrics.render().then(
        (text) => send(200, metrics.contentType, text),
        (error: unknown) => send(500, 'text/plain', `metrics failed: ${describeError(error)}\n`),
      );
      return;
    }
    send(404, 'text/plain', 'a worker answers /_health and /_metrics only\n');
  });

  const reload = () => {
    const next = compile(true);
    if (next === null) return;
    const previous = current;
    current = load(next);
    retire(previous, retired, logger);
    logger.log('info', 'application reloaded', { file: settings.file, endpoints: next.endpoints.length });
  };
  let stopWatching: (() => void) | null = null;

  manageLifecycle(logger, {
    begin: (why) => {
      shuttingDown = true;
      stopWatching?.();
      logger.log('info', 'shutting down', { reason: why, timeout: formatDuration(settings.shutdownTimeoutMs) });
    },
    drain: async () => {
      await queue.drain(settings.shutdownTimeoutMs);
      await Promise.allSettled([current.close(), ...[...retired].map((a) => a.close()), (page as AdminHandler | null)?.close()]);
      await (deliveries as DeliveryLog | null)?.close();
      // Every job has ended or been handed back, so has its span: the last batch is exported now.
      await tracing.shutdown();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    deadlineMs: settings.shutdownTimeoutMs + HAND_BACK_MS,
    end: (outcome) =>
      logger.log(
        outcome === 'done' ? 'info' : 'warn',
        outcome === 'done' ? 'shutdown complete' : 'shutdown timeout reached; exiting with jobs still running (they are resumed after their lock expires)',
      ),
  });

  server.on('error', (error: NodeJS.ErrnoException) => {
    process.stderr.write(`endpoint-service: ${listenFailure(error, settings.host, settings.port)}\n`);
    process.exit(LISTEN_FAILED_EXIT_CODE);
  });
  server.listen({ port: settings.port, host: settings.host }, () => {
    const address = server.address() as AddressInfo;
    const origin = originOf(settings.host, address.port);
    process.stdout.write(`${WORKER_READY_PREFIX}${origin}\n`);
    void opening.then(() => {
      if (page === null) return;
      const url = `${origin}/`;
      if (madeToken) logger.log('info', `the deliveries page: ${loginUrlOf(url, token)}`, { url: loginUrlOf(url, token) });
      else logger.log('info', `the deliveries page: ${url} (log in with ${TOKEN_ENV}: ${url}?token=…)`, { url });
    });
    if (settings.watch) stopWatching = watchApplication(settings.file, reload, logger);
  });
}

/** A task's warning (an ignored failure) or error, as serve logs it. */
function logTaskProblem(logger: Logger, event: TaskOutcomeEvent): void {
  const { requestId, endpoint, taskId: task, kind, outcome, attempts, error, code } = event;
  const durationMs = Math.round(event.durationMs * 10) / 10;
  logger.log(outcome === 'failed' ? 'error' : 'warn', 'task', { requestId, endpoint, task, kind, outcome, durationMs, attempts, error, code });
}
