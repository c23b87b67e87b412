// The queue's command-line options, shared by serve, worker and jobs, with their parsers and the
// defaults the help shows: a bad value is a usage error (exit 2) before anything starts. What the
// options make of the environment (the URL, the keys) is queue-settings.ts, read when a command runs.

import { Option, type Command } from 'commander';
import { age, count, duration, oneOf, queueName } from './option-parsers.js';

export interface QueueFlags {
  queue?: string;
  queueName: string;
  /** commander's negated flag: false with --no-queue-consume. */
  queueConsume?: boolean;
  queueConcurrency?: number;
  concurrency?: number;
  queueAttempts: number;
  queueBackoff: number;
  queueLockDuration: number;
  queueFallback?: 'in-process';
  onConfigChange: 'current' | 'strict';
  emailRedelivery: 'at-most-once' | 'at-least-once';
  queueRetention: number;
}

export const DEFAULT_QUEUE_NAME = 'endpoint-service';
export const DEFAULT_CONCURRENCY = 16;
export const DEFAULT_BACKOFF = '30s';
const DEFAULT_LOCK_DURATION = '30s';
const DEFAULT_RETENTION = '14d';

/**
 * --queue and --queue-name: what every command that reaches the queue takes. `key`: whether the
 * command seals or opens jobs (serve, worker), so that --queue needs ENDPOINT_SERVICE_QUEUE_KEY;
 * `jobs` reads only what is stored in clear (`show --reveal` says so on its own option).
 */
export function addQueueLocation(command: Command, key: 'needed' | 'not-needed'): Command {
  return command
    .option(
      '--queue <url>',
      `the durable queue: redis://… or rediss://…, or postgres://… (experimental) (default: $ENDPOINT_SERVICE_QUEUE_URL)${key === 'needed' ? '; needs ENDPOINT_SERVICE_QUEUE_KEY' : ''}`,
    )
    .addOption(new Option('--queue-name <name>', 'the queue, for several applications on one Redis').argParser(queueName).default(DEFAULT_QUEUE_NAME));
}

export const concurrencyOption = () => count('a number of jobs', 1000);

/** The options of processes that run jobs (serve and worker). */
export function addRunOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--queue-lock-duration <duration>',
        'how long a job stays locked by a worker that stopped renewing it (a crash); stalled jobs are looked for as often, so another worker resumes it within about twice this',
      )
        .argParser(duration)
        .default(duration(DEFAULT_LOCK_DURATION), DEFAULT_LOCK_DURATION),
    )
    .addOption(
      new Option('--on-config-change <mode>', 'a queued run whose endpoint changed since: "current" runs it with the current configuration, "strict" fails it')
        .argParser(oneOf('current', 'strict'))
        .default('current'),
    )
    .addOption(
      new Option(
        '--email-redelivery <mode>',
        'a mail message a crash left being sent: "at-most-once" leaves it (delivery-unknown), "at-least-once" resends it with the same Message-ID',
      )
        .argParser(oneOf('at-most-once', 'at-least-once'))
        .default('at-most-once'),
    )
    .addOption(
      new Option('--queue-retention <duration>', 'how long failed jobs are kept for `jobs` (completed ones: an hour); older ones are removed about hourly')
        .argParser(age)
        .default(age(DEFAULT_RETENTION), DEFAULT_RETENTION),
    );
}

/** serve's own queue options. */
export function addServeQueueOptions(command: Command): Command {
  addQueueLocation(command, 'needed');
  command
    .option('--no-queue-consume', 'with --queue: only enqueue; leave running the jobs to `endpoint-service worker` processes')
    .option(
      '--queue-concurrency <n>',
      `with --queue: jobs run at once by each serving process (default: ${DEFAULT_CONCURRENCY})`,
      count('a number of jobs', 1000),
    )
    .addOption(
      new Option('--queue-attempts <n>', 'with --queue: attempts of a background run whose task fails transiently, first included')
        .argParser(count('a number of attempts', 100))
        .default(6),
    )
    .addOption(
      new Option('--queue-backoff <duration>', 'with --queue: scale of the wait between attempts (full jitter, doubling, at most 30m)')
        .argParser(duration)
        .default(duration(DEFAULT_BACKOFF), DEFAULT_BACKOFF),
    )
    .addOption(
      new Option(
        '--queue-fallback <mode>',
        'with --queue: when the queue cannot store a run, "in-process" runs its tasks here instead of answering 503',
      ).argParser(oneOf('in-process')),
    );
  return addRunOptions(command);
}
