// `endpoint-service worker`'s command line: its argument, options and the defaults the help shows.
// The compiler and the queue consumer are loaded only when it runs (docs/architecture.md, "Where
// other changes go").
import { Option, type Command } from 'commander';
import type { Returning } from '../action.js';
import { duration, oneOf, portNumber, repeated } from '../option-parsers.js';
import { addOtelOption } from '../otel-options.js';
import { addQueueLocation, addRunOptions, concurrencyOption, DEFAULT_CONCURRENCY } from '../queue-options.js';
import type { WorkerFlags } from '../worker.js';
import type { LogFormat } from '../../server/log.js';
import { addDeliveryStoreOptions } from '../deliveries-options.js';

const DEFAULT_PORT = 9464;
const DEFAULT_SHUTDOWN_TIMEOUT = '30s';

export function registerWorker(program: Command, returning: Returning): void {
  const command = program
    .command('worker')
    .description('run queued background tasks (serve --queue) without answering requests')
    .argument('<file>', 'the endpoints.xml, the same as serve’s')
    .addOption(new Option('--port <n>', 'port of /_health and /_metrics, 0 for any free port').argParser(portNumber).default(DEFAULT_PORT))
    .option('--host <address>', 'address of /_health and /_metrics', '127.0.0.1')
    .option('--concurrency <n>', `jobs run at once (default: ${DEFAULT_CONCURRENCY})`, concurrencyOption())
    .option('--smtp-url <url>', 'SMTP connection for Email tasks (default: $ENDPOINT_SERVICE_SMTP_URL, else email-sending-configuration.xml)')
    .addOption(
      new Option('--allow-task-host <hosts>', 'only let HttpRequest tasks call these hosts (comma-separated, repeatable)')
        .argParser(repeated)
        .default([] as string[], 'any host'),
    )
    .option('--deny-private-addresses', 'tasks connect to no loopback, private, link-local or unspecified address (as serve --deny-private-addresses)')
    .option('--no-idempotency-key', 'do not send an Idempotency-Key header with POST and PATCH HttpRequest tasks')
    .addOption(
      new Option('--shutdown-timeout <duration>', 'on SIGTERM, how long running jobs may take before they are handed back')
        .argParser(duration)
        .default(duration(DEFAULT_SHUTDOWN_TIMEOUT), DEFAULT_SHUTDOWN_TIMEOUT),
    )
    .option('--log-format <format>', 'pretty or json (default: pretty on a terminal, else json)', oneOf<LogFormat>('pretty', 'json'))
    .option('--watch', 'recompile when the application directory changes');
  addOtelOption(command);
  addDeliveryStoreOptions(command, 'the delivery log serve records in, where the outcomes of the tasks run here are added');
  addQueueLocation(command, 'needed');
  addRunOptions(command).action(
    returning(async (file: string, flags: WorkerFlags, command: Command) => {
      const { runWorkerCommand } = await import('../worker.js');
      return runWorkerCommand(file, flags, command);
    }),
  );
}
