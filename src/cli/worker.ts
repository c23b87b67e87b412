// `endpoint-service worker <file> --queue URL`: runs queued task runs only, with the task
// options of serve, and /_health and /_metrics on --port.

import { resolveDeliveryStore, type DeliveryStoreFlags } from './deliveries-options.js';
import type { Command } from 'commander';
import { compileToServe, failedStartCode, type ServingCompile } from '../server/compile-to-serve.js';
import { createLogger, type LogFormat } from '../server/log.js';
import { emailSettings } from '../tasks/email/settings.js';
import { httpRequestSettings } from '../tasks/http-request/settings.js';
import { TASK_KINDS } from '../tasks/registry.js';
import type { TaskFlags, TaskSettings } from '../tasks/settings.js';
import type { ExitCode } from './action.js';
import { useColor } from './color.js';
import { compileReport } from './formatters/text.js';
import { startTracingIfWanted, tracingWanted } from './otel-options.js';
import { usageOf } from './option-parsers.js';
import type { QueueFlags } from './queue-options.js';
import { noBackgroundEndpointWarning, resolveQueueSettings } from './queue-settings.js';

/** worker's options: its own, the queue's, the delivery log's, and those the task kinds read (tasks/<kind>/settings.ts). */
export interface WorkerFlags extends QueueFlags, DeliveryStoreFlags, TaskFlags {
  port: number;
  host: string;
  shutdownTimeout: number;
  logFormat?: LogFormat;
  watch?: boolean;
  otel?: boolean;
}

export async function runWorkerCommand(file: string, flags: WorkerFlags, command: Command): Promise<ExitCode> {
  const usage = usageOf(command);
  const queue = resolveQueueSettings(flags, usage, 'worker') ?? usage('worker needs --queue URL (or ENDPOINT_SERVICE_QUEUE_URL)');
  const tasks: TaskSettings = {
    'http-request': httpRequestSettings(flags, usage),
    email: emailSettings(flags, usage, 'worker', process.env),
  };
  const { storeRefusal } = await import('../queue/store-refusal.js');
  const refusal = await storeRefusal(queue.url, queue.backend);
  if (refusal !== null) usage(`--queue: ${refusal}`);
  const logger = createLogger(flags.logFormat ?? (process.stdout.isTTY ? 'pretty' : 'json'), useColor(process.stderr));

  const compile = (print: boolean): ServingCompile => {
    // A worker runs background endpoints' tasks only: mail elsewhere needs no SMTP settings here.
    // A queued run carries the ${base-url} serve bound for its request: nothing to warn about here.
    const outcome = compileToServe(file, {
      mode: 'serve',
      kinds: TASK_KINDS.list,
      env: process.env,
      smtpUrlGiven: tasks.email.smtpUrl !== null,
      tasksRunHere: 'background-only',
      publicUrlGiven: true,
    });
    if (print && outcome.kind === 'unreadable') process.stderr.write(`endpoint-service: ${outcome.reason}\n`);
    if (print && outcome.kind === 'invalid') process.stderr.write(compileReport(outcome));
    return outcome;
  };
  const started = compile(true);
  if (started.kind !== 'compiled') return failedStartCode(started);
  const first = started.application;
  const idle = noBackgroundEndpointWarning(first, 'worker');
  if (idle !== null) logger.log('warn', idle);
  const { runWorker } = await import('../server/worker-process.js');
  // Each job's run continues the trace of the request that queued it (src/queue/job-trace.ts).
  const tracing = await startTracingIfWanted(tracingWanted(flags.otel === true, process.env), logger);
  runWorker(
    {
      file,
      port: flags.port,
      host: flags.host,
      tasks,
      shutdownTimeoutMs: flags.shutdownTimeout,
      watch: flags.watch === true,
      queue,
      deliveries: resolveDeliveryStore(flags, queue.url, usage),
    },
    logger,
    first,
    (print) => {
      const next = compile(print);
      if (next.kind !== 'compiled') {
        logger.log('error', `${file} has errors; still running jobs with the previous version`);
        return null;
      }
      return next.application;
    },
    process.env,
    tracing,
  );
  return 0;
}
