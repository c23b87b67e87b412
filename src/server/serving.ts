// A process that answers requests: the only one with --workers 1, else each cluster worker.
// It owns the HTTP server, the loaded application, graceful shutdown and (alone) --watch.

import cluster from 'node:cluster';
import { Server as NetServer, type AddressInfo, type Socket } from 'node:net';
import type { Application } from '../compiler/ast.js';
import type { RuntimeObserver, TaskOutcomeEvent } from '../runtime/observer.js';
import { describeError } from '../errors.js';
import { TASK_KINDS } from '../tasks/registry.js';
import { BodyBudget, defaultClientLimit } from './body/budget.js';
import { HttpService, type HttpServerState } from './http.js';
import { LoadedApplication } from '../runtime/loaded.js';
import type { Logger } from './log.js';
import { ServiceMetrics } from './metrics.js';
import { originOf, type ServeSettings } from './options.js';
import { UploadSpool } from './body/spool.js';
import { HAND_BACK_MS, QueueRuntime } from './queue-runtime.js';
import { formatDuration } from '../units.js';
import { watchApplication, type Compiler } from './watch.js';
import { NO_TRACING, type Tracing } from '../tracing.js';
import { ServiceGuards } from './guards.js';
import { ServiceDeduplication } from './deduplication/service.js';
import { listenFailure, LISTEN_FAILED_EXIT_CODE } from './listen-failure.js';
import { manageLifecycle, retire, type Lifecycle } from './lifecycle.js';
import type { ControlMessage, WorkerMessage } from './cluster/messages.js';
import { logPageDetailsTo } from './write-response.js';
import { DeliveryLogRuntime, describeLocation } from './delivery-log/runtime.js';
import { logAdminPage, openAdminPage, type RunningAdmin } from './admin-runtime.js';
import { jobIdFor } from '../queue/job.js';

export const READY_PREFIX = 'endpoint-service listening on ';

/**
 * The ready line names the origin only, in a form scripts read; with --base-path the address of
 * the endpoints is said in the log beside it.
 */
export function logBasePath(settings: Pick<ServeSettings, 'basePath'>, origin: string, logger: Logger): void {
  if (settings.basePath !== '') logger.log('info', 'endpoints are served below the base path', { url: `${origin}${settings.basePath}/` });
}

export interface ServingOptions {
  readonly settings: ServeSettings;
  readonly logger: Logger;
  readonly application: Application;
  readonly compile: Compiler;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** On with --otel (server/otel.ts); off by default. */
  readonly tracing?: Tracing;
}

/** After the ready line: where the delivery log is kept, or that it is off. */
/** `on`: false when the store could not be opened (said already, in one line). */
export function logDeliveries(settings: Pick<ServeSettings, 'deliveries'>, on: boolean, logger: Logger): void {
  if (settings.deliveries === null) logger.log('info', 'the delivery log is off (--deliveries none)');
  else if (on) logger.log('info', `deliveries are recorded in ${describeLocation(settings.deliveries)}`, { deliveries: describeLocation(settings.deliveries) });
}

/** For the empty deliveries page: a request that makes a first delivery. */
export function exampleRequest(origin: string | null, basePath: string, endpoints: readonly string[]): string | null {
  if (origin === null || endpoints.length === 0) return null;
  return `curl -X POST ${origin}${basePath}/${endpoints[0]}`;
}

/** Where this process reaches its own listener: a wildcard address is reached on loopback. */
function ownAddress(host: string, port: number): URL {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return new URL(originOf(reachable, port));
}

export function serve(options: ServingOptions): void {
  const { settings, logger } = options;
  logErrorPages(logger);
  const metrics = new ServiceMetrics();
  const guards = new ServiceGuards({ store: settings.rateLimitStore, prefix: settings.rateLimitPrefix }, logger, metrics);
  // <deduplicate> keys live in the store of the rate limits.
  const deduplication = new ServiceDeduplication({ store: settings.rateLimitStore, prefix: settings.rateLimitPrefix }, logger, metrics);
  /** Set once its store is open, before the first request. */
  let deliveries: DeliveryLogRuntime | null = null;
  const observer = runtimeObserver(metrics, logger, () => deliveries);
  const tracing = options.tracing ?? NO_TRACING;
  const queue = openQueue(settings, logger, metrics, tracing, () => state.current);
  const load = (application: Application) => loadApplication(application, options, { queue, observer, guards, deduplication, deliveries: () => deliveries });
  const state: HttpServerState = { current: load(options.application), shuttingDown: false, queue };
  /** Applications replaced by a reload whose task runs may still be going. */
  const retired = new Set<LoadedApplication>();
  const service = new HttpService(state, settings, logger, metrics, openBodyIntake(settings, logger, metrics), guards, tracing);
  const server = service.server;
  const sockets = openConnections(server);
  const reload = () => reloadApplication(options, state, retired, load, { guards, deduplication });

  let stopWatching: (() => void) | null = null;
  const running: Running = { settings, logger, service, sockets, state, retired, queue, guards, deduplication, tracing };
  const shutdown = manageLifecycle(
    logger,
    lifecycleOf(running, {
      stopWatching: () => stopWatching?.(),
      closeDeliveries: () => Promise.allSettled([deliveries?.close(), log.admin?.close()]),
    }),
  );
  if (cluster.isWorker) obeyPrimary(shutdown, reload);

  server.on('error', (error: NodeJS.ErrnoException) => {
    process.stderr.write(`endpoint-service: ${listenFailure(error, settings.host, settings.port)}\n`);
    process.exit(LISTEN_FAILED_EXIT_CODE);
  });
  const log = openDeliveries(settings, options, logger, metrics, service);
  const openingLog = log.opened.then((opened) => (deliveries = opened));
  void Promise.all([guards.open(options.application), deduplication.open(options.application), openingLog]).then(() =>
    server.listen({ port: settings.port, host: settings.host }, () => {
      const address = server.address() as AddressInfo;
      const origin = originOf(settings.host, address.port);
      service.setListeningOrigin(origin);
      deliveries?.listening(ownAddress(settings.host, address.port));
      log.listening(origin);
      if (!cluster.isWorker) {
        process.stdout.write(`${READY_PREFIX}${origin}\n`);
        logBasePath(settings, origin, logger);
        logDeliveries(settings, deliveries !== null, logger);
        logAdminPage(log.admin, logger);
        if (settings.watch) stopWatching = watchApplication(settings.file, reload, logger);
      }
    }),
  );
}

/** An error page tells a visitor what to do; what it leaves out is logged, by request id. */
function logErrorPages(logger: Logger): void {
  logPageDetailsTo(({ requestId, status, detail, errors }) =>
    logger.log(status >= 500 ? 'error' : 'info', 'error page', {
      requestId,
      status,
      detail,
      ...(errors !== undefined ? { errors: errors.map((e) => e.detail) } : {}),
    }),
  );
}

/** Each task's outcome, to the metrics, the delivery log (once open) and the log. */
function runtimeObserver(metrics: ServiceMetrics, logger: Logger, deliveries: () => DeliveryLogRuntime | null): RuntimeObserver {
  return {
    taskFinished(event: TaskOutcomeEvent) {
      metrics.taskFinished(event);
      deliveries()?.recording.taskFinished(event);
      const level = event.outcome === 'failed' ? 'error' : event.outcome === 'ignored-failure' ? 'warn' : 'info';
      logger.log(level, 'task', {
        requestId: event.requestId,
        endpoint: event.endpoint,
        task: event.taskId,
        kind: event.kind,
        outcome: event.outcome,
        durationMs: Math.round(event.durationMs * 10) / 10,
        attempts: event.attempts,
        error: event.error,
        code: event.code,
      });
    },
    warn(message, fields) {
      logger.log('warn', message, fields);
    },
  };
}

/** serve --queue: background runs are stored in the queue; this process also runs queued jobs unless --no-queue-consume. */
function openQueue(settings: ServeSettings, logger: Logger, metrics: ServiceMetrics, tracing: Tracing, current: () => LoadedApplication): QueueRuntime | null {
  if (settings.queue === null) return null;
  return new QueueRuntime(settings.queue, logger, metrics.registry, TASK_KINDS, { produce: true, consume: settings.queue.consume }, current, tracing);
}

interface Collaborators {
  readonly queue: QueueRuntime | null;
  readonly observer: RuntimeObserver;
  readonly guards: ServiceGuards;
  readonly deduplication: ServiceDeduplication;
  readonly deliveries: () => DeliveryLogRuntime | null;
}

function loadApplication(application: Application, options: ServingOptions, on: Collaborators): LoadedApplication {
  const { queue } = on;
  return new LoadedApplication(application, {
    ...(queue !== null
      ? {
          enqueueTasks: (run) =>
            queue.enqueue(application, run).then((outcome) => {
              if (outcome === 'queued') on.deliveries()?.recording.queued(run.requestId, jobIdFor(run.requestId, run.endpoint.name));
              return outcome;
            }),
        }
      : {}),
    env: options.env,
    observer: on.observer,
    upstreamTimeoutMs: options.settings.requestTimeoutMs,
    kinds: TASK_KINDS,
    taskSettings: options.settings.tasks,
    guards: on.guards,
    deduplication: on.deduplication,
  });
}

/** Open connections, for the shutdown (see there). */
function openConnections(server: HttpService['server']): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return sockets;
}

function reloadApplication(
  options: ServingOptions,
  state: HttpServerState,
  retired: Set<LoadedApplication>,
  load: (application: Application) => LoadedApplication,
  stores: { readonly guards: ServiceGuards; readonly deduplication: ServiceDeduplication },
): void {
  // The primary already printed the diagnostics of a broken version; a worker only notes it.
  const result = options.compile(!cluster.isWorker);
  if (result === null) return;
  const previous = state.current;
  state.current = load(result);
  void stores.guards.open(result);
  void stores.deduplication.open(result);
  retire(previous, retired, options.logger);
  options.logger.log('info', 'application reloaded', { file: options.settings.file, endpoints: result.endpoints.length });
}

/** What a serving process stops, drains and closes when it shuts down. */
interface Running {
  readonly settings: ServeSettings;
  readonly logger: Logger;
  readonly service: HttpService;
  readonly sockets: ReadonlySet<Socket>;
  readonly state: HttpServerState;
  readonly retired: ReadonlySet<LoadedApplication>;
  readonly queue: QueueRuntime | null;
  readonly guards: ServiceGuards;
  readonly deduplication: ServiceDeduplication;
  readonly tracing: Tracing;
}

/** `late`: what is set up after the lifecycle is (the --watch, the delivery log and its page). */
function lifecycleOf(running: Running, late: { stopWatching(): void; closeDeliveries(): Promise<unknown> }): Lifecycle {
  const { settings, logger, service, state } = running;
  return {
    begin: (why) => {
      state.shuttingDown = true;
      late.stopWatching();
      logger.log('info', 'shutting down', { reason: why, inflightRequests: service.inflightRequests, timeout: formatDuration(settings.shutdownTimeoutMs) });
    },
    drain: () => drain(running, late.closeDeliveries),
    deadlineMs: settings.shutdownTimeoutMs + (running.queue !== null ? HAND_BACK_MS : 0),
    end: (outcome) => {
      if (outcome === 'timeout') {
        logger.log('warn', `shutdown timeout of ${formatDuration(settings.shutdownTimeoutMs)} reached; abandoning what is still running`, {
          inflightRequests: service.inflightRequests,
          runningTaskRuns: state.current.runningTaskRuns,
        });
      } else {
        logger.log('info', 'shutdown complete');
      }
    },
  };
}

async function drain(running: Running, closeDeliveries: () => Promise<unknown>): Promise<void> {
  const { service, state, retired } = running;
  const server = service.server;
  // Stops accepting, and resolves once every connection has closed: a request whose bytes
  // are still arriving is in flight too, and waiting only for the requests node has parsed
  // let the process exit under it (test/reliability/shutdown.e2e.test.ts). net.Server's
  // close, not http.Server's: that one also stops node's headers timeout, which bounds how
  // long such a request may take.
  const allClosed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  // Keep-alive connections between requests close now; one that never sent a byte has
  // nothing to answer; busy ones close after their answer (`connection: close` from now on).
  server.closeIdleConnections();
  for (const socket of running.sockets) if (socket.bytesRead === 0) socket.destroy();
  await service.idle();
  // Requests begun before the signal were answered keep-alive: their connections are idle now.
  server.closeIdleConnections();
  await allClosed;
  // A request that was still arriving at the first wait has been answered by now.
  await service.idle();
  await Promise.all([state.current.tasksSettled(), ...[...retired].map((a) => a.tasksSettled()), running.queue?.drain(running.settings.shutdownTimeoutMs)]);
  await Promise.allSettled([
    state.current.close(),
    ...[...retired].map((a) => a.close()),
    running.guards.close(),
    running.deduplication.close(),
    closeDeliveries(),
  ]);
  // Every request and task has ended, so has its span: the last batch is exported now.
  await running.tracing.shutdown();
}

/** A --workers child: told by the primary to stop, to reload, and asked whether its loop turns. */
function obeyPrimary(shutdown: (why: string) => void, reload: () => void): void {
  process.on('message', (message: ControlMessage) => {
    if (message?.type === 'endpoint-service:shutdown') shutdown('asked by the primary process');
    else if (message?.type === 'endpoint-service:reload') reload();
    // Answered from the event loop: a loop held for ever answers nothing, and the primary replaces this process.
    else if (message?.type === 'endpoint-service:probe') process.send?.({ type: 'endpoint-service:alive' } satisfies WorkerMessage);
  });
  // The primary is gone: nobody would replace or stop this worker.
  process.on('disconnect', () => shutdown('the primary process went away'));
}

/**
 * The delivery log and, unless this is a --workers child (the primary serves it then), its page,
 * opened once the log is: a store that cannot be opened is said once, by the log. `opened`
 * resolves before the first request is taken.
 */
function openDeliveries(settings: ServeSettings, options: ServingOptions, logger: Logger, metrics: ServiceMetrics, service: HttpService) {
  const endpoints = options.application.endpoints.map((e) => e.name);
  let origin: string | null = null;
  const state = {
    admin: null as RunningAdmin | null,
    opened: DeliveryLogRuntime.open(settings.deliveries, options.env, logger, metrics, (request) => service.clientIp(request), cluster.isWorker).then(
      async (opened) => {
        service.deliveries = opened?.recording ?? null;
        service.replays = opened?.gate ?? null;
        if (opened !== null && !cluster.isWorker) {
          state.admin = (await openAdminPage(settings, endpoints, () => exampleRequest(origin, settings.basePath, endpoints), logger)).admin;
        }
        return opened;
      },
    ),
    listening(at: string) {
      origin = at;
    },
  };
  return state;
}

/**
 * The body budget and this process's folder of temporary uploads, whose leftovers of ended
 * processes are removed first. The folder goes when the process exits, however it exits short of SIGKILL (whose
 * leftovers the next start removes).
 */
function openBodyIntake(settings: ServeSettings, logger: Logger, metrics: ServiceMetrics) {
  let spool: UploadSpool;
  try {
    spool = UploadSpool.open(settings.uploadDir);
  } catch (error) {
    process.stderr.write(`endpoint-service: cannot make a folder for temporary uploads: ${describeError(error)}\n`);
    process.exit(1);
  }
  process.once('exit', () => spool.close());
  if (spool.sweptLeftovers > 0) logger.log('info', 'removed temporary uploads left by processes that ended', { folders: spool.sweptLeftovers });
  metrics.watchUploads(spool);
  const budget = new BodyBudget(settings.maxInflightBodyBytes, defaultClientLimit(settings.maxInflightBodyBytes, settings.maxBodyBytes));
  metrics.watchBodyBudget(budget);
  return { maxBytes: settings.maxBodyBytes, budget, spool };
}
