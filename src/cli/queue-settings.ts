// What the queue options and the environment make of the queue: its URL and backend, the keys that
// seal its jobs (a usage error when one is missing or malformed), the settings of a process that
// runs jobs, and the warning for a queue that stays empty. Loaded when serve, worker or jobs runs.

import type { Application } from '../compiler/index.js';
import { parseQueueKey, type QueueKey } from '../queue/seal.js';
import { backendOf, type QueueSettings } from '../queue/settings.js';
import { duration, type Usage } from './option-parsers.js';
import { DEFAULT_BACKOFF, DEFAULT_CONCURRENCY, type QueueFlags } from './queue-options.js';

export const KEY_HOWTO = "make one with: node -e \"console.log(require('node:crypto').randomBytes(32).toString('base64'))\"";

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
