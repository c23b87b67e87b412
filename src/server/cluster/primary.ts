// The primary process with --workers N: forks the workers, replaces one that dies or stops
// answering, prints the ready line once all of them listen, gathers metrics for a scrape, and
// stops them on a signal.

import cluster, { type Address, type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Logger } from '../log.js';
import { METRICS_REQUEST, METRICS_RESPONSE } from '../metrics.js';
import { originOf, type ServeSettings } from '../options.js';
import { formatDuration } from '../../units.js';
import { exampleRequest, logBasePath, logDeliveries, READY_PREFIX } from '../serving.js';
import { logAdminPage, openAdminPage, type RunningAdmin } from '../admin-runtime.js';
import { forceExit } from '../lifecycle.js';
import { LISTEN_FAILED_EXIT_CODE } from '../listen-failure.js';
import { REPORTER_ENV, type ControlMessage, type WorkerMessage } from './messages.js';
import { watchApplication, type Compiler } from '../watch.js';
import { DeduplicationRecords } from '../deduplication/records.js';
import { answerDeduplication } from '../deduplication/cluster.js';

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
  const primary = new Primary(settings, logger, compile);
  cluster.on('listening', (worker, address) => primary.listening(worker, address));
  cluster.on('exit', (worker, code, signal) => primary.exited(worker, code, signal));
  cluster.on('message', (worker, message: { type?: unknown; id?: unknown }) => primary.message(worker, message));
  process.on('SIGTERM', () => primary.shutdown('SIGTERM'));
  process.on('SIGINT', () => primary.shutdown('SIGINT'));
  primary.start();
}

type ExitCode = number | null;

class Primary {
  private readonly aggregator = new AggregatorRegistry();
  private ready = false;
  private stopping = false;
  private listeningCount = 0;
  private quickDeaths = 0;
  private readonly startedAt = new Map<number, number>();
  // The worker that reports the start-up compile (diagnostics, progress) for all of them; the
  // others compile quietly, side by side with it.
  private reporter: Worker | null = null;
  /** Workers whose start-up compile failed, with the exit code the service then ends with. */
  private readonly notCompiled = new Map<number, 1 | 2>();
  /** A quiet worker failed to compile: the reporter is still to say why (or, odder, succeed). */
  private startFailed = false;
  /** Listening workers, with the probes each has left unanswered since its last answer. */
  private readonly unanswered = new Map<Worker, number>();
  /** Workers that have started listening: only they have their control messages set up. */
  private readonly serving = new Set<Worker>();
  private readonly page: { ready(origin: string): void };
  /** <deduplicate> keys without Redis: one record here, for every worker. */
  private readonly deduplication: DeduplicationRecords | null;
  private readonly probing: NodeJS.Timeout;
  private stopWatching: (() => void) | null = null;

  constructor(
    private readonly settings: ServeSettings,
    private readonly logger: Logger,
    private readonly compile: Compiler,
  ) {
    this.page = servePage(settings, logger);
    this.deduplication = settings.rateLimitStore === null ? new DeduplicationRecords() : null;
    this.probing = setInterval(() => this.probe(), PROBE_INTERVAL_MS);
    this.probing.unref();
  }

  start(): void {
    const forkAll = () => {
      for (let i = 0; i < this.settings.workers; i++) this.fork();
    };
    // Rate limits in memory count in the primary, so the workers share one limit.
    if (this.settings.rateLimitStore === null) {
      void import('rate-limiter-flexible').then(({ RateLimiterClusterMaster }) => {
        new RateLimiterClusterMaster();
        forkAll();
      });
      return;
    }
    forkAll();
  }

  listening(worker: Worker, address: Address): void {
    // The file changed between the compiles of two workers: they would serve different versions.
    if (this.startFailed) return this.giveUp(1, 'a worker process could not compile the application at start-up');
    this.serving.add(worker);
    // It started while the others stopped: it stops too.
    if (this.stopping) return send(worker, { type: 'endpoint-service:shutdown' });
    // Probed from now on: its start-up compile, which holds its loop, is over.
    this.unanswered.set(worker, 0);
    this.listeningCount++;
    if (!this.ready && this.listeningCount >= this.settings.workers) {
      this.ready = true;
      const origin = originOf(this.settings.host, address.port);
      process.stdout.write(`${READY_PREFIX}${origin}\n`);
      logBasePath(this.settings, origin, this.logger);
      this.page.ready(origin);
      if (this.settings.watch) this.stopWatching = watchApplication(this.settings.file, () => this.reload(), this.logger);
    }
  }

  exited(worker: Worker, code: ExitCode, signal: string | null): void {
    const lived = Date.now() - (this.startedAt.get(worker.id) ?? 0);
    this.startedAt.delete(worker.id);
    this.unanswered.delete(worker);
    this.serving.delete(worker);
    if (this.stopping) {
      if (workers().length === 0) {
        this.logger.log('info', 'shutdown complete');
        process.exit(0);
      }
      return;
    }
    if (!this.ready) return this.failedToStart(worker, code, signal);
    this.quickDeaths = lived < 5000 ? this.quickDeaths + 1 : 0;
    const delay = this.quickDeaths === 0 ? 0 : Math.min(MAX_RESTART_DELAY_MS, 100 * 2 ** (this.quickDeaths - 1));
    this.logger.log('warn', 'a worker process died; starting a new one', { pid: worker.process.pid, exitCode: code, signal, restartInMs: delay });
    setTimeout(() => this.fork(), delay);
  }

  /** A worker ended before all of them listened: the service does not start. */
  private failedToStart(worker: Worker, code: ExitCode, signal: string | null): void {
    const compileFailure = this.notCompiled.get(worker.id);
    if (compileFailure !== undefined) {
      // The reporter prints the diagnostics: wait for its verdict rather than cut it short.
      if (worker !== this.reporter && this.reporter !== null && !this.reporter.isDead()) {
        this.startFailed = true;
        return;
      }
      return this.giveUp(compileFailure, null);
    }
    // It has said why it cannot listen (the address or port): the others would say the same.
    if (code === LISTEN_FAILED_EXIT_CODE) return this.giveUp(LISTEN_FAILED_EXIT_CODE, null);
    // A worker that cannot start (application changed underneath) will not do better on a retry.
    return this.giveUp(1, `a worker process could not start (exit code ${code ?? signal})`);
  }

  message(worker: Worker, message: { type?: unknown; id?: unknown }): void {
    if (this.deduplication !== null && answerDeduplication(this.deduplication, worker, message)) return;
    if (message?.type === 'endpoint-service:alive') {
      if (this.unanswered.has(worker)) this.unanswered.set(worker, 0);
      return;
    }
    if (message?.type === 'endpoint-service:not-compiled') {
      this.notCompiled.set(worker.id, (message as Extract<WorkerMessage, { type: 'endpoint-service:not-compiled' }>).exitCode);
      return;
    }
    if (message?.type !== METRICS_REQUEST) return;
    this.aggregator.clusterMetrics().then(
      (text) => send(worker, { type: METRICS_RESPONSE, id: message.id, text } as unknown as ControlMessage),
      (error: Error) => send(worker, { type: METRICS_RESPONSE, id: message.id, error: error.message } as unknown as ControlMessage),
    );
  }

  shutdown(why: string): void {
    if (this.stopping) {
      if (why === 'SIGINT') {
        for (const worker of workers()) worker.process.kill('SIGKILL');
        forceExit(this.logger);
      }
      return;
    }
    this.stopping = true;
    this.stopWatching?.();
    clearInterval(this.probing);
    this.logger.log('info', 'shutting down', { reason: why, workers: workers().length, timeout: formatDuration(this.settings.shutdownTimeoutMs) });
    // One still compiling would miss the message (it listens for none yet); it holds no
    // connection, so a signal stops it, whatever its start-up has reached.
    for (const worker of workers()) {
      if (this.serving.has(worker)) send(worker, { type: 'endpoint-service:shutdown' });
      else worker.process.kill('SIGTERM');
    }
    if (workers().length === 0) process.exit(0);
    setTimeout(() => {
      this.logger.log('warn', 'workers did not exit in time; stopping them');
      for (const worker of workers()) worker.process.kill('SIGKILL');
      process.exit(0);
    }, this.settings.shutdownTimeoutMs + EXIT_GRACE_MS).unref();
  }

  private fork(): void {
    // A replacement whose delay ran out after a SIGTERM would serve on, told nothing.
    if (this.stopping) return;
    const first = this.reporter === null && !this.ready;
    const worker = cluster.fork(first ? { [REPORTER_ENV]: '1' } : {});
    if (first) this.reporter = worker;
    this.startedAt.set(worker.id, Date.now());
  }

  private giveUp(code: number, why: string | null): void {
    if (why !== null) process.stderr.write(`endpoint-service: ${why}; stopping\n`);
    for (const other of workers()) other.kill();
    process.exit(code);
  }

  private probe(): void {
    for (const [worker, missed] of this.unanswered) {
      if (missed < PROBES_LEFT_UNANSWERED) {
        this.unanswered.set(worker, missed + 1);
        send(worker, { type: 'endpoint-service:probe' });
        continue;
      }
      // SIGKILL: a held loop runs no handler for a gentler signal. The exit starts its replacement.
      this.unanswered.delete(worker);
      this.logger.log('warn', 'a worker process stopped answering; replacing it', {
        pid: worker.process.pid,
        unansweredProbes: missed,
        probeIntervalMs: PROBE_INTERVAL_MS,
      });
      worker.process.kill('SIGKILL');
    }
  }

  private reload(): void {
    if (this.compile(true) === null) return;
    for (const worker of workers()) send(worker, { type: 'endpoint-service:reload' });
  }
}

function send(worker: Worker, message: ControlMessage): void {
  if (worker.isConnected()) worker.send(message);
}

function workers(): Worker[] {
  return Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
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
