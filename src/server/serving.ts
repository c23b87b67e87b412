// A process that answers requests: the only one with --workers 1, else each cluster worker.
// It owns the HTTP server, the loaded application, graceful shutdown and (alone) --watch.

import cluster from 'node:cluster';
import { Server as NetServer, type AddressInfo, type Socket } from 'node:net';
import type { Application } from '../compiler/ast.js';
import type { RuntimeObserver, TaskOutcomeEvent } from '../runtime/observer.js';
import { describeError } from '../errors.js';
import { TASK_KINDS } from '../tasks/registry.js';
import { HttpService, type HttpServerState } from './http.js';
import { LoadedApplication } from '../runtime/loaded.js';
import type { Logger } from './log.js';
import { ServiceMetrics } from './metrics.js';
import { originOf, type ServeSettings } from './options.js';
import { formatDuration } from '../units.js';
import { watchApplication, type Compiler } from './watch.js';
import { ServiceGuards } from './guards.js';

export const READY_PREFIX = 'endpoint-service listening on ';

/** Messages between the primary and its workers. */
export type ControlMessage = { readonly type: 'endpoint-service:shutdown' } | { readonly type: 'endpoint-service:reload' };

export interface ServingOptions {
  readonly settings: ServeSettings;
  readonly logger: Logger;
  readonly application: Application;
  readonly compile: Compiler;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export function serve(options: ServingOptions): void {
  const { settings, logger } = options;
  const metrics = new ServiceMetrics();
  const guards = new ServiceGuards({ store: settings.rateLimitStore, prefix: settings.rateLimitPrefix }, logger, metrics);
  const observer: RuntimeObserver = {
    taskFinished(event: TaskOutcomeEvent) {
      metrics.taskFinished(event);
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
  const load = (application: Application) =>
    new LoadedApplication(application, {
      env: options.env,
      observer,
      upstreamTimeoutMs: settings.requestTimeoutMs,
      kinds: TASK_KINDS,
      ...(settings.smtpUrl !== undefined ? { smtpUrl: settings.smtpUrl } : {}),
      allowedTaskHosts: settings.allowedTaskHosts,
      denyPrivateAddresses: settings.denyPrivateAddresses,
      idempotencyKeys: settings.idempotencyKeys,
      guards,
    });

  const state: HttpServerState = { current: load(options.application), shuttingDown: false };
  /** Applications replaced by a reload whose task runs may still be going. */
  const retired = new Set<LoadedApplication>();
  const service = new HttpService(state, settings, logger, metrics, guards);
  const server = service.server;
  // Open connections, for the shutdown (see there).
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  const reload = () => {
    // The primary already printed the diagnostics of a broken version; a worker only notes it.
    const result = options.compile(!cluster.isWorker);
    if (result === null) return;
    const previous = state.current;
    state.current = load(result);
    void guards.open(result);
    retired.add(previous);
    void previous
      .tasksSettled()
      .then(() => previous.close())
      .catch((error: unknown) => logger.log('warn', 'closing the previous version failed', { error: describeError(error, { stack: true }) }))
      .finally(() => retired.delete(previous));
    logger.log('info', 'application reloaded', { file: settings.file, endpoints: result.endpoints.length });
  };

  let stopWatching: (() => void) | null = null;
  let shutdownStarted = false;
  const shutdown = (why: string) => {
    if (shutdownStarted) {
      if (why === 'SIGINT') forceExit(logger);
      return;
    }
    shutdownStarted = true;
    state.shuttingDown = true;
    stopWatching?.();
    logger.log('info', 'shutting down', { reason: why, inflightRequests: service.inflightRequests, timeout: formatDuration(settings.shutdownTimeoutMs) });
    // Stops accepting, and resolves once every connection has closed: a request whose bytes
    // are still arriving is in flight too, and waiting only for the requests node has parsed
    // let the process exit under it (test/reliability/shutdown.e2e.test.ts). net.Server's
    // close, not http.Server's: that one also stops node's headers timeout, which bounds how
    // long such a request may take.
    const allClosed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    // Keep-alive connections between requests close now; one that never sent a byte has
    // nothing to answer; busy ones close after their answer (`connection: close` from now on).
    server.closeIdleConnections();
    for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
    const everything = (async () => {
      await service.idle();
      // Requests begun before the signal were answered keep-alive: their connections are idle now.
      server.closeIdleConnections();
      await allClosed;
      // A request that was still arriving at the first wait has been answered by now.
      await service.idle();
      await Promise.all([state.current.tasksSettled(), ...[...retired].map((a) => a.tasksSettled())]);
      await Promise.allSettled([state.current.close(), ...[...retired].map((a) => a.close()), guards.close()]);
    })();
    const deadline = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), settings.shutdownTimeoutMs).unref());
    void Promise.race([everything.then(() => 'done' as const), deadline]).then((outcome) => {
      if (outcome === 'timeout') {
        logger.log('warn', `shutdown timeout of ${formatDuration(settings.shutdownTimeoutMs)} reached; abandoning what is still running`, {
          inflightRequests: service.inflightRequests,
          runningTaskRuns: state.current.runningTaskRuns,
        });
      } else {
        logger.log('info', 'shutdown complete');
      }
      process.exit(0);
    });
  };

  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('unhandledRejection', (error) => logger.log('error', 'unhandled promise rejection', { error: describeError(error, { stack: true }) }));
  // One request's bug must not end every other request in this process: log and go on.
  process.on('uncaughtException', (error) => logger.log('error', 'uncaught exception', { error: describeError(error, { stack: true }) }));

  if (cluster.isWorker) {
    process.on('message', (message: ControlMessage) => {
      if (message?.type === 'endpoint-service:shutdown') shutdown('asked by the primary process');
      else if (message?.type === 'endpoint-service:reload') reload();
    });
    // The primary is gone: nobody would replace or stop this worker.
    process.on('disconnect', () => shutdown('the primary process went away'));
  }

  server.on('error', (error: NodeJS.ErrnoException) => {
    const reason = error.code === 'EADDRINUSE' ? `${originOf(settings.host, settings.port)} is already in use` : describeError(error, { stack: true });
    process.stderr.write(`endpoint-service: cannot listen: ${reason}\n`);
    process.exit(1);
  });
  void guards.open(options.application).then(() => server.listen({ port: settings.port, host: settings.host }, () => {
    const address = server.address() as AddressInfo;
    const origin = originOf(settings.host, address.port);
    service.setListeningOrigin(origin);
    if (!cluster.isWorker) {
      process.stdout.write(`${READY_PREFIX}${origin}\n`);
      if (settings.watch) stopWatching = watchApplication(settings.file, reload, logger);
    }
  }));
}

/** A second Ctrl-C: the person at the terminal does not want to wait for the graceful end. */
export function forceExit(logger: Logger): never {
  logger.log('warn', 'second SIGINT: exiting without waiting for requests and tasks');
  process.exit(130);
}
