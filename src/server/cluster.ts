// The primary process with --workers N: forks the workers, replaces one that dies or stops
// answering, prints the ready line once all of them listen, gathers metrics for a scrape, and
// stops them on a signal.

import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Logger } from './log.js';
import { METRICS_REQUEST, METRICS_RESPONSE } from './metrics.js';
import { originOf, type ServeSettings } from './options.js';
import { formatDuration } from '../units.js';
import { exampleRequest, logBasePath, logDeliveries, READY_PREFIX } from './serving.js';
import { logAdminPage, openAdminPage, type RunningAdmin } from './admin-runtime.js';
import { forceExit } from './lifecycle.js';
import { LISTEN_FAILED_EXIT_CODE } from './listen-failure.js';
import { REPORTER_ENV, type ControlMessage, type WorkerMessage } from './cluster-messages.js';
import { watchApplication, type Compiler } from './watch.js';
import { DeduplicationRecords } from './deduplication-records.js';
import { answerDeduplication } from './deduplication-cluster.js';

/** Extra time after --shutdown-timeout for workers to exit on their own before they are killed. */
const EXIT_GRACE_MS = 5000;
const MAX_RESTART_DELAY_MS = 5000;
/**
 * Every listening worker is asked this often whether its event loop still turns; it answers from
 * that loop. One whose loop is held (a bug that never yields) never exits on its own, and the
 * connections handed to it wait for ever, so after PROBES_LEFT_UNANSWERED probes in a row without
 * an answer (about 10 s; docs/behaviour.md, "Processes") it is killed and replaced. Counted in
 * probes, not in time: when the primary's own loop was held (a --watch compile), the answers
 * waiting for it count as soon as it reads them, and cost a worker at most one probe.
 */
const PROBE_INTERVAL_MS = 2000;
const PROBES_LEFT_UNANSWERED = 5;

export function runPrimary(settings: ServeSettings, logger: Logger, compile: Compiler): void {
  const aggregator = new AggregatorRegistry();
  let ready = false;
  let stopping = false;
  let listening = 0;
  let quickDeaths = 0;
  const startedAt = new Map<number, number>();
  // The worker that reports the start-up compile (diagnostics, progress) for all of them; the
  // others compile quietly, side by side with it.
  let reporter: Worker | null = null;
  /** Workers whose start-up compile failed, with the exit code the service then ends with. */
  const notCompiled = new Map<number, 1 | 2>();
  /** A quiet worker failed to compile: the reporter is still to say why (or, odder, succeed). */
  let startFailed = false;
  /** Listening workers, with the probes each has left unanswered since its last answer. */
  const unanswered = new Map<Worker, number>();

  /** Workers that have started listening: only they have their control messages set up. */
  const serving = new Set<Worker>();

  const page = servePage(settings, logger);

  const fork = () => {
    // A replacement whose delay ran out after a SIGTERM would serve on, told nothing.
    if (stopping) return;
    const first = reporter === null && !ready;
    const worker = cluster.fork(first ? { [REPORTER_ENV]: '1' } : {});
    if (first) reporter = worker;
    startedAt.set(worker.id, Date.now());
  };
  const giveUp = (code: number, why: string | null) => {
    if (why !== null) process.stderr.write(`endpoint-service: ${why}; stopping\n`);
    for (const other of workers()) other.kill();
    process.exit(code);
  };
  const send = (worker: Worker, message: ControlMessage) => {
    if (worker.isConnected()) worker.send(message);
  };
  const workers = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);

  cluster.on('listening', (worker, address) => {
    // The file changed between the compiles of two workers: they would serve different versions.
    if (startFailed) return giveUp(1, 'a worker process could not compile the application at start-up');
    serving.add(worker);
    // It started while the others stopped: it stops too.
    if (stopping) return send(worker, { type: 'endpoint-service:shutdown' });
    // Probed from now on: its start-up compile, which holds its loop, is over.
    unanswered.set(worker, 0);
    listening++;
    if (!ready && listening >= settings.workers) {
      ready = true;
      const origin = originOf(settings.host, address.port);
      process.stdout.write(`${READY_PREFIX}${origin}\n`);
      logBasePath(settings, origin, logger);
      page.ready(origin);
      if (settings.watch) stopWatching = watchApplication(settings.file, reload, logger);
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker.id) ?? 0);
    startedAt.delete(worker.id);
    unanswered.delete(worker);
    serving.delete(worker);
    if (stopping) {
      if (workers().length === 0) {
        logger.log('info', 'shutdown complete');
        process.exit(0);
      }
      return;
    }
    if (!ready) {
      const compileFailure = notCompiled.get(worker.id);
      if (compileFailure !== undefined) {
        // The reporter prints the diagnostics: wait for its verdict rather than cut it short.
        if (worker !== reporter && reporter !== null && !reporter.isDead()) {
          startFailed = true;
          return;
        }
        return giveUp(compileFailure, null);
      }
      // It has said why it cannot listen (the address or port): the others would say the same.
      if (code === LISTEN_FAILED_EXIT_CODE) return giveUp(LISTEN_FAILED_EXIT_CODE, null);
      // A worker that cannot start (application changed underneath) will not do better on a retry.
      return giveUp(1, `a worker process could not start (exit code ${code ?? signal})`);
    }
    quickDeaths = lived < 5000 ? quickDeaths + 1 : 0;
    const delay = quickDeaths === 0 ? 0 : Math.min(MAX_RESTART_DELAY_MS, 100 * 2 ** (quickDeaths - 1));
    logger.log('warn', 'a worker process died; starting a new one', { pid: worker.process.pid, exitCode: code, signal, restartInMs: delay });
    setTimeout(fork, delay);
  });

  // <deduplicate> keys without Redis: one record here, for every worker.
  const deduplication = settings.rateLimitStore === null ? new DeduplicationRecords() : null;

  cluster.on('message', (worker, message: { type?: unknown; id?: unknown }) => {
    if (deduplication !== null && answerDeduplication(deduplication, worker, message)) return;
    if (message?.type === 'endpoint-service:alive') {
      if (unanswered.has(worker)) unanswered.set(worker, 0);
      return;
    }
    if (message?.type === 'endpoint-service:not-compiled') {
      notCompiled.set(worker.id, (message as Extract<WorkerMessage, { type: 'endpoint-service:not-compiled' }>).exitCode);
      return;
    }
    if (message?.type !== METRICS_REQUEST) return;
    aggregator.clusterMetrics().then(
      (text) => send(worker, { type: METRICS_RESPONSE, id: message.id, text } as unknown as ControlMessage),
      (error: Error) => send(worker, { type: METRICS_RESPONSE, id: message.id, error: error.message } as unknown as ControlMessage),
    );
  });

  const probing = setInterval(() => {
    for (const [worker, missed] of unanswered) {
      if (missed < PROBES_LEFT_UNANSWERED) {
        unanswered.set(worker, missed + 1);
        send(worker, { type: 'endpoint-service:probe' });
        continue;
      }
      // SIGKILL: a held loop runs no handler for a gentler signal. The exit starts its replacement.
      unanswered.delete(worker);
      logger.log('warn', 'a worker process stopped answering; replacing it', {
        pid: worker.process.pid,
        unansweredProbes: missed,
        probeIntervalMs: PROBE_INTERVAL_MS,
      });
      worker.process.kill('SIGKILL');
    }
  }, PROBE_INTERVAL_MS);
  probing.unref();

  let stopWatching: (() => void) | null = null;
  const reload = () => {
    if (compile(true) === null) return;
    for (const worker of workers()) send(worker, { type: 'endpoint-service:reload' });
  };

  const shutdown = (why: string) => {
    if (stopping) {
      if (why === 'SIGINT') {
        for (const worker of workers()) worker.process.kill('SIGKILL');
        forceExit(logger);
      }
      return;
    }
    stopping = true;
    stopWatching?.();
    clearInterval(probing);
    logger.log('info', 'shutting down', { reason: why, workers: workers().length, timeout: formatDuration(settings.shutdownTimeoutMs) });
    // One still compiling would miss the message (it listens for none yet); it holds no
    // connection, so a signal stops it, whatever its start-up has reached.
    for (const worker of workers()) {
      if (serving.has(worker)) send(worker, { type: 'endpoint-service:shutdown' });
      else worker.process.kill('SIGTERM');
    }
    if (workers().length === 0) process.exit(0);
    setTimeout(() => {
      logger.log('warn', 'workers did not exit in time; stopping them');
      for (const worker of workers()) worker.process.kill('SIGKILL');
      process.exit(0);
    }, settings.shutdownTimeoutMs + EXIT_GRACE_MS).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  // Rate limits in memory count in the primary, so the workers share one limit.
  if (settings.rateLimitStore === null) {
    void import('rate-limiter-flexible').then(({ RateLimiterClusterMaster }) => {
      new RateLimiterClusterMaster();
      for (let i = 0; i < settings.workers; i++) fork();
    });
    return;
  }
  for (let i = 0; i < settings.workers; i++) fork();
}

/**
 * The deliveries page, served by the primary from the log's store for all the workers; opening
 * it also tells, once for all of them, whether that store can be opened. Said after the ready line.
 */
function servePage(settings: ServeSettings, logger: Logger): { ready(origin: string): void } {
  let readyOrigin: string | null = null;
  let page: { readonly admin: RunningAdmin | null; readonly logOn: boolean } | null = null;
  const announce = () => {
    if (page === null || readyOrigin === null) return;
    logDeliveries(settings, page.logOn, logger);
    logAdminPage(page.admin, logger);
  };
  void openAdminPage(settings, [], () => exampleRequest(readyOrigin, settings.basePath, []), logger).then((opened) => {
    page = opened;
    announce();
  });
  return {
    ready(origin) {
      readyOrigin = origin;
      announce();
    },
  };
}
