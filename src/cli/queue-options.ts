// The queue's command-line options, shared by serve, worker and jobs, and their checks: a bad
// value is a usage error (exit 2) before anything starts.

import { Option, type Command } from 'commander';
import type { Application } from '../compiler/index.js';
import { parseQueueKey, type QueueKey } from '../queue/seal.js';
import { backendOf, type QueueSettings } from '../queue/settings.js';
import { age, count, duration, oneOf, queueName, type Usage } from './option-parsers.js';

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
const DEFAULT_CONCURRENCY = 16;
const DEFAULT_BACKOFF = '30s';
const DEFAULT_LOCK_DURATION = '30s';
const DEFAULT_RETENTION = '14d';
export const KEY_HOWTO = "make one with: node -e \"console.log(require('node:crypto').randomBytes(32).toString('base64'))\"";

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

/** The queue URL and keys, or a usage error: no URL, an unknown scheme, no key or a malformed one. */
export function resolveQueueLocation(
  flags: Pick<QueueFlags, 'queue'>,
  usage: Usage,
  keyRequired = true,
  env: Readonly<Record<string, string | undefined>> = process.env,
): { url: string; backend: QueueSettings['backend']; keys: QueueKey[] } | null {
  const fromEnv = env.ENDPOINT_SERVICE_QUEUE_URL;
  const url = flags.queue ?? (fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined);
  if (url === undefined) return null;
  const source = flags.queue !== undefined ? '--queue' : 'the environment variable ENDPOINT_SERVICE_QUEUE_URL';
  const store = backendOf(url);
  if (!store.ok) return usage(`${source} ${store.problem}`);
  const { backend } = store;
  const keyText = env.ENDPOINT_SERVICE_QUEUE_KEY;
  if (keyText === undefined || keyText.trim() === '') {
    if (!keyRequired) return { url, backend, keys: [] };
    return usage(`a queue needs ENDPOINT_SERVICE_QUEUE_KEY, 32 random bytes in base64 or hex, to seal what it stores; ${KEY_HOWTO}`);
  }
  const key = parseQueueKey(keyText);
  if (key === null) return usage(`ENDPOINT_SERVICE_QUEUE_KEY must be 32 bytes written in base64 (44 characters) or hex (64 characters); ${KEY_HOWTO}`);
  const keys = [key];
  const previousText = env.ENDPOINT_SERVICE_QUEUE_KEY_PREVIOUS;
  if (previousText !== undefined && previousText.trim() !== '') {
    const previous = parseQueueKey(previousText);
    if (previous === null) return usage('ENDPOINT_SERVICE_QUEUE_KEY_PREVIOUS must be 32 bytes written in base64 or hex');
    keys.push(previous);
  }
  return { url, backend, keys };
}

export function resolveQueueSettings(flags: QueueFlags, usage: Usage, role: 'serve' | 'worker'): QueueSettings | null {
  const location = resolveQueueLocation(flags, usage);
  if (location === null) return null;
  return {
    ...location,
    name: flags.queueName,
    attempts: flags.queueAttempts ?? 6,
    backoffMs: flags.queueBackoff ?? duration(DEFAULT_BACKOFF),
    lockDurationMs: flags.queueLockDuration,
    concurrency: (role === 'worker' ? flags.concurrency : flags.queueConcurrency) ?? DEFAULT_CONCURRENCY,
    consume: role === 'worker' || flags.queueConsume !== false,
    fallback: flags.queueFallback ?? 'none',
    onConfigChange: flags.onConfigChange,
    emailRedelivery: flags.emailRedelivery,
    retentionMs: flags.queueRetention,
  };
}

export const concurrencyOption = () => count('a number of jobs', 1000);

/**
 * The start-up warning for `serve --queue` and `worker` on an application that queues nothing
 * (only tasks="background" runs are queued), or null. Without it such a queue stays empty and
 * nothing says why.
 */
export function noBackgroundEndpointWarning(application: Application, role: 'serve' | 'worker'): string | null {
  if (application.endpoints.some((e) => e.tasksMode === 'background')) return null;
  return role === 'serve'
    ? 'no endpoint has tasks="background", so nothing is queued: every task runs in the process that answers its request. Mark the endpoints whose tasks may run later with tasks="background", or leave out --queue'
    : 'no endpoint has tasks="background", so this worker gets no jobs: only the tasks of background endpoints are queued';
}
