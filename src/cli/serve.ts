// `endpoint-service serve`: checks the options, compiles the application (refusing to start on
// any error) and starts the serving process, or the primary of --workers processes.

import cluster from 'node:cluster';
import { accessSync, constants, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import type { Application, TasksRunHere } from '../compiler/index.js';
import { compileToServe, failedStartCode, type ServingCompile } from '../server/compile-to-serve.js';
import type { QueueSettings } from '../queue/settings.js';
import { TASK_KINDS } from '../tasks/registry.js';
import { createLogger, type LogFormat, type Logger } from '../server/log.js';
import type { PublicUrl, ServeSettings } from '../server/options.js';
import type { TrustProxy } from '../server/client-ip.js';
import { httpRequestSettings } from '../tasks/http-request/settings.js';
import { emailSettings } from '../tasks/email/settings.js';
import type { TaskFlags } from '../tasks/settings.js';
import { formatSize } from '../units.js';
import { useColor } from './color.js';
import type { ExitCode } from './action.js';
import { compileReport } from './formatters/text.js';
import { startTracingIfWanted, tracingWanted } from './otel-options.js';
import type { QueueFlags } from './queue-options.js';
import { noBackgroundEndpointWarning, resolveQueueSettings } from './queue-settings.js';
import { compileProgress } from './progress.js';
import { size, usageOf, type Usage } from './option-parsers.js';
import { DEFAULT_MAX_INFLIGHT_BODY_SIZE } from './serve-defaults.js';
import { REPORTER_ENV, type WorkerMessage } from '../server/cluster/messages.js';
import { resolveDeliverySettings, type AdminFlags, type DeliveryRecordingFlags } from './deliveries-options.js';

/** serve's options: its own, the queue's, the delivery log's, and those the task kinds read (tasks/<kind>/settings.ts). */
export interface ServeFlags extends QueueFlags, DeliveryRecordingFlags, AdminFlags, TaskFlags {
  port?: number;
  host: string;
  basePath: string;
  cors?: string;
  workers?: number;
  maxBodySize: number;
  maxInflightBodySize?: number;
  uploadDir?: string;
  requestTimeout: number;
  shutdownTimeout: number;
  logFormat?: LogFormat;
  watch?: boolean;
  otel?: boolean;
  trustProxy?: TrustProxy;
  rateLimitStore?: string;
  rateLimitPrefix: string;
  publicUrl?: PublicUrl;
}

/**
 * Whose tasks a serve runs: with a queue that it does not consume and no in-process fallback,
 * background runs only ever go to the queue, so their mail is sent (and needs SMTP settings)
 * by the workers alone.
 */
function tasksRunBy(queue: QueueSettings | null): TasksRunHere {
  return queue !== null && !queue.consume && queue.fallback === 'none' ? 'not-background' : 'every-endpoint';
}

/** Checks the options, compiles, and starts serving; the exit code of a start that failed. */
export async function runServe(file: string, flags: ServeFlags, command: Command): Promise<ExitCode> {
  const settings = resolveSettings(file, flags, usageOf(command));
  // Once, by the process started from the command line (the primary of --workers).
  if (cluster.isPrimary) await refuseRefusedStores(settings, usageOf(command));
  const logger = createLogger(settings.logFormat, settings.color);

  let serving = false;
  // With --workers N the primary does not compile at start-up: its workers do, side by side, and
  // the first of them speaks for all (diagnostics, progress, exit code). Compiling in the primary
  // first and then again in every worker took twice as long to be ready as one process.
  const reporting = cluster.isWorker ? process.env[REPORTER_ENV] === '1' : settings.workers <= 1;
  // The start-up compile of the process that reports shows progress (not a reload's).
  const startProgress = await compileProgress(process.stderr, reporting);
  // print: diagnostics on stderr (the reporting process); log: one log line (a worker's reload,
  // its primary printed them); silent: a worker's start-up compile beside the reporter's.
  const compile = (diagnostics: 'print' | 'log' | 'silent'): ServingCompile => {
    let outcome: ServingCompile;
    try {
      const progress = serving ? undefined : startProgress;
      outcome = compileToServe(file, {
        mode: 'serve',
        kinds: TASK_KINDS.list,
        env: process.env,
        smtpUrlGiven: settings.tasks.email.smtpUrl !== null,
        publicUrlGiven: settings.publicUrl !== null,
        tasksRunHere: tasksRunBy(settings.queue),
        ...(progress !== undefined ? { onProgress: progress.update } : {}),
      });
      progress?.stop();
    } catch (error) {
      startProgress.stop();
      // A compiler bug must not take down a running service on a --watch reload.
      if (!serving) throw error;
      logger.log('error', `compiling ${file} failed unexpectedly: ${(error as Error).message}`);
      return { kind: 'failed', reason: (error as Error).message };
    }
    sayOutcome(outcome, diagnostics, file, logger);
    return outcome;
  };

  // A --watch reload: the new application, or null to keep serving the previous one.
  const reload = (print: boolean): Application | null => {
    const next = compile(print ? 'print' : 'log');
    if (next.kind !== 'compiled') {
      if (print) logger.log('error', `${file} has errors; still serving the previous version`);
      return null;
    }
    return next.application;
  };

  if (cluster.isPrimary && settings.workers > 1) {
    const { runPrimary } = await import('../server/cluster/primary.js');
    serving = true;
    runPrimary(settings, logger, reload);
    return 0;
  }
  const started = compile(reporting ? 'print' : 'silent');
  if (started.kind !== 'compiled') {
    const code = failedStartCode(started);
    // The primary exits with this code; the reporter has said why.
    // Letting go of the channel afterwards lets the worker exit with that code too.
    if (cluster.isWorker) process.send?.({ type: 'endpoint-service:not-compiled', exitCode: code } satisfies WorkerMessage, () => process.disconnect());
    return code;
  }
  const first = started.application;
  const idleQueue = settings.queue !== null && reporting ? noBackgroundEndpointWarning(first, 'serve') : null;
  if (idleQueue !== null) logger.log('warn', idleQueue);
  const { serve } = await import('../server/serving.js');
  // Each process that answers requests exports its own spans; the SDK is loaded only now.
  const tracing = await startTracingIfWanted(settings.otel, logger);
  serving = true;
  serve({ settings, logger, application: first, env: process.env, compile: reload, ...(tracing !== undefined ? { tracing } : {}) });
  return 0;
}

/** What a compile found, said as `diagnostics` asks (see runServe). */
function sayOutcome(outcome: ServingCompile, diagnostics: 'print' | 'log' | 'silent', file: string, logger: Logger): void {
  switch (outcome.kind) {
    case 'unreadable':
      if (diagnostics === 'print') process.stderr.write(`endpoint-service: ${outcome.reason}\n`);
      else if (diagnostics === 'log') logger.log('error', outcome.reason);
      break;
    case 'invalid':
      if (diagnostics === 'print') process.stderr.write(compileReport(outcome));
      else if (diagnostics === 'log') logger.log('error', `${file} has errors; still serving the previous version`, { errors: outcome.errorCount });
      break;
    case 'compiled':
      if (diagnostics === 'print' && outcome.warningCount > 0) process.stderr.write(compileReport({ ...outcome, errorCount: 0 }));
      break;
  }
}

/**
 * A store that answers but refuses the URL (a wrong password, a database it does not have) is a
 * usage error: retrying would log "unreachable" for ever, or write into another database.
 */
async function refuseRefusedStores(settings: ServeSettings, usage: Usage): Promise<void> {
  const stores: { option: string; url: string; backend: 'redis' | 'postgres' }[] = [];
  if (settings.queue !== null) stores.push({ option: '--queue', url: settings.queue.url, backend: settings.queue.backend });
  if (settings.rateLimitStore !== null && settings.rateLimitStore !== settings.queue?.url)
    stores.push({ option: '--rate-limit-store', url: settings.rateLimitStore, backend: 'redis' });
  if (stores.length === 0) return;
  const { storeRefusal } = await import('../queue/store-refusal.js');
  for (const store of stores) {
    const refusal = await storeRefusal(store.url, store.backend);
    if (refusal !== null) usage(`${store.option}: ${refusal}`);
  }
}

function resolveSettings(file: string, flags: ServeFlags, usage: Usage): ServeSettings {
  const port = portOf(flags, usage);
  const basePath = basePathOf(flags, usage);
  const cors = corsOf(flags, usage);
  // Each kind's settings are built at its place in the order of serve's checks (hosts before
  // body sizes, the SMTP URL after the upload folder): which of two bad options is reported is
  // part of what the command answers. The record is gathered below.
  const httpRequest = httpRequestSettings(flags, usage);
  const maxInflightBodyBytes = flags.maxInflightBodySize ?? Math.max(size(DEFAULT_MAX_INFLIGHT_BODY_SIZE), flags.maxBodySize);
  if (maxInflightBodyBytes < flags.maxBodySize) {
    usage(
      `--max-inflight-body-size (${formatSize(maxInflightBodyBytes)}) is smaller than --max-body-size (${formatSize(flags.maxBodySize)}): a body of the largest accepted size could never be read`,
    );
  }
  if (flags.uploadDir !== undefined) checkUploadDir(flags.uploadDir, usage);
  const email = emailSettings(flags, usage, 'serve', process.env);
  const queue = resolveQueueSettings(flags, usage, 'serve');
  return {
    file,
    port,
    host: flags.host,
    basePath,
    cors,
    workers: flags.workers ?? availableParallelism(),
    maxBodyBytes: flags.maxBodySize,
    maxInflightBodyBytes,
    uploadDir: flags.uploadDir ?? null,
    requestTimeoutMs: flags.requestTimeout,
    shutdownTimeoutMs: flags.shutdownTimeout,
    logFormat: flags.logFormat ?? (process.stdout.isTTY ? 'pretty' : 'json'),
    color: useColor(process.stderr),
    watch: flags.watch === true,
    tasks: { 'http-request': httpRequest, email },
    otel: tracingWanted(flags.otel === true, process.env),
    queue,
    trustProxy: flags.trustProxy ?? null,
    // Instances that share a durable queue share its Redis: their rate limits count together too.
    rateLimitStore: flags.rateLimitStore ?? (queue !== null && queue.backend === 'redis' ? queue.url : null),
    rateLimitPrefix: flags.rateLimitPrefix,
    publicUrl: flags.publicUrl ?? null,
    deliveries: resolveDeliverySettings(flags, queue?.url ?? null, usage),
    admin: flags.adminPort === 'none' ? null : { host: flags.adminHost, port: flags.adminPort },
  };
}

/** --port, else $PORT, else 8080. */
function portOf(flags: ServeFlags, usage: Usage): number {
  if (flags.port !== undefined) return flags.port;
  const fromEnv = process.env.PORT;
  if (fromEnv === undefined || fromEnv === '') return 8080;
  if (!/^\d+$/.test(fromEnv) || Number(fromEnv) > 65535)
    usage(`the environment variable PORT is "${fromEnv}", not a port number from 0 to 65535; fix it or pass --port`);
  return Number(fromEnv);
}

function basePathOf(flags: ServeFlags, usage: Usage): string {
  const basePath = flags.basePath.trim();
  if (!basePath.startsWith('/') || /[?#\s]/.test(basePath)) usage(`--base-path must be a path starting with "/" (such as /app), not "${flags.basePath}"`);
  return basePath.replace(/\/+$/, '');
}

function corsOf(flags: ServeFlags, usage: Usage): ServeSettings['cors'] {
  if (flags.cors === undefined) return null;
  const origins = flags.cors
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  if (origins.length === 0) usage('--cors needs at least one origin (such as https://app.example) or *');
  if (origins.includes('*')) return '*';
  // Stored as a browser serialises its Origin (lower-case host, no default port): an origin
  // written https://App.example:443 must still match, now that a mismatch is refused.
  const normalised = origins.map((origin) => {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) usage(`--cors origin "${origin}" must look like https://app.example (scheme and host, no path)`);
    try {
      return new URL(origin).origin;
    } catch {
      return usage(`--cors origin "${origin}" is not a valid origin (such as https://app.example)`);
    }
  });
  return new Set(normalised);
}

/** --upload-dir must be a folder this process can write in; it is not created, so a typo does not make one. */
function checkUploadDir(folder: string, usage: (message: string) => never): void {
  let stat;
  try {
    stat = statSync(folder);
  } catch {
    return usage(`--upload-dir "${folder}" does not exist; create it first`);
  }
  if (!stat.isDirectory()) usage(`--upload-dir "${folder}" is a file, not a folder`);
  try {
    accessSync(folder, constants.W_OK | constants.X_OK);
  } catch {
    usage(`--upload-dir "${folder}" is not writable by this user`);
  }
}
