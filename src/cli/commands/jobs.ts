// `endpoint-service jobs`'s command line: its subcommands, their arguments and options. The queue
// store's client is loaded only when one runs (docs/architecture.md, "Where other changes go").
import { Option, type Command } from 'commander';
import type { Returning } from '../action.js';
import type { JobsFlags } from '../jobs.js';
import { oneOf, positiveNumber } from '../option-parsers.js';
import { addQueueLocation } from '../queue-options.js';
import { addDeliveryStoreOptions } from '../deliveries-options.js';

const STATES = ['failed', 'waiting', 'active', 'delayed', 'completed'] as const;

export function registerJobs(program: Command, returning: Returning): void {
  const jobs = program.command('jobs').description('look at and repair the queue of serve --queue: failed runs, retries');
  const sub = (name: string, description: string) => addQueueLocation(jobs.command(name).description(description), 'not-needed').exitOverride();

  sub('list', 'list jobs, by default the failed ones')
    .addOption(new Option('--state <state>', 'which jobs').choices(STATES).default('failed'))
    .addOption(new Option('--format <format>', 'text or json').argParser(oneOf('text', 'json')).default('text'))
    .addOption(new Option('--limit <n>', 'at most this many').argParser(positiveNumber).default(50))
    .action(
      returning(async (flags: JobsFlags, command: Command) => {
        const { listJobs } = await import('../jobs.js');
        return listJobs(flags, command);
      }),
    );

  addDeliveryStoreOptions(
    sub(
      'show',
      'one request’s jobs: each task’s outcome and error code, mail markers, delivery-unknown messages, attempts; with --reveal, its parameters and error texts; the request id of a replayed (deduplicated) answer shows the job of the request it replayed',
    ),
    'the delivery log that tells which request a replayed answer repeated',
  )
    .argument('<request-id>', 'the request id (x-request-id) or a job id')
    .addOption(new Option('--format <format>', 'text or json').argParser(oneOf('text', 'json')).default('text'))
    .option(
      '--reveal',
      'also print the bound parameters and the error texts; needs ENDPOINT_SERVICE_QUEUE_KEY (the key serve and worker run with) to open them; secrets print as ***',
    )
    .action(
      returning(async (id: string, flags: JobsFlags, command: Command) => {
        const { showJob } = await import('../jobs.js');
        return showJob(id, flags, command);
      }),
    );

  sub('retry', 'run a failed job again: only its tasks that did not succeed run')
    .argument('[request-id]', 'the request id or a job id')
    .option('--all-failed', 'every failed job')
    .action(
      returning(async (id: string | undefined, flags: JobsFlags, command: Command) => {
        const { retryJobs } = await import('../jobs.js');
        return retryJobs(id, flags, command);
      }),
    );

  sub('discard', 'remove a request’s jobs from the queue')
    .argument('<request-id>', 'the request id or a job id')
    .action(
      returning(async (id: string, flags: JobsFlags, command: Command) => {
        const { discardJobs } = await import('../jobs.js');
        return discardJobs(id, flags, command);
      }),
    );
  jobs.exitOverride();
}
