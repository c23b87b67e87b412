// Whether the store answers, for /_health and the queue_up metric, and the start-up checks of
// how it is configured: a Redis that keeps nothing on disk loses every job on a restart, and an
// eviction policy other than noeviction drops jobs silently when memory runs out.

import type { Redis } from 'ioredis';
import { describeError } from '../errors.js';
import type { QueueObserver } from './observer.js';

export function watchStore(
  client: Redis,
  observer: QueueObserver,
  describe: (error: unknown) => string = describeError,
): { readonly up: boolean; stop(): void } {
  const state = { up: client.status === 'ready', stop: () => {} };
  let checked = false;
  let lastError = '';
  const onReady = () => {
    if (!state.up) observer.log('info', 'the queue store is reachable');
    state.up = true;
    lastError = '';
    observer.storeUp(true);
    if (!checked) {
      checked = true;
      void checkConfiguration(client, observer);
    }
  };
  const onDown = (error?: Error) => {
    // A closed connection says nothing new unless the store was up; each reconnection attempt
    // closes one. One line per change of reason: a store that stays down is retried quietly.
    if (error === undefined && !state.up) return;
    const reason = error !== undefined ? describe(error) : 'connection closed';
    if (state.up || reason !== lastError) observer.log('warn', 'the queue store is unreachable; retrying', { reason });
    lastError = reason;
    state.up = false;
    observer.storeUp(false);
  };
  const onError = (error: Error) => onDown(error);
  const onEnd = () => onDown();
  client.on('ready', onReady);
  client.on('error', onError);
  client.on('close', onEnd);
  if (state.up) onReady();
  else observer.storeUp(false);
  state.stop = () => {
    client.off('ready', onReady);
    client.off('error', onError);
    client.off('close', onEnd);
  };
  return state;
}

async function checkConfiguration(client: Redis, observer: QueueObserver): Promise<void> {
  try {
    const [, appendonly] = (await client.config('GET', 'appendonly')) as string[];
    const [, save] = (await client.config('GET', 'save')) as string[];
    const [, policy] = (await client.config('GET', 'maxmemory-policy')) as string[];
    observer.log('info', 'queue store configuration', { appendonly, save, maxmemoryPolicy: policy });
    if (appendonly === 'no' && (save ?? '').trim() === '') {
      observer.log('warn', 'the queue store keeps nothing on disk (appendonly no, no save): a restart of Redis loses every queued job; enable appendonly');
    }
    if (policy !== undefined && policy !== 'noeviction') {
      observer.log('warn', `the queue store's maxmemory-policy is ${policy}: Redis may evict queued jobs when memory runs out; set it to noeviction`);
    }
  } catch (error) {
    // CONFIG may be disabled (managed Redis): nothing to say then.
    observer.log('info', 'the queue store configuration could not be checked', { reason: describeError(error) });
  }
}

/** A store without connection events (PostgreSQL): asked every few seconds. */
export function watchPostgres(
  ping: () => Promise<void>,
  observer: QueueObserver,
  describe: (error: unknown) => string = describeError,
): { readonly up: boolean; stop(): void } {
  const state = { up: false, stop: () => {} };
  let lastError: string | null = null;
  const check = async () => {
    try {
      await ping();
      if (!state.up) observer.log('info', 'the queue store is reachable');
      state.up = true;
      lastError = null;
      observer.storeUp(true);
    } catch (error) {
      const reason = describe(error);
      if (state.up || reason !== lastError) observer.log('warn', 'the queue store is unreachable; retrying', { reason });
      state.up = false;
      lastError = reason;
      observer.storeUp(false);
    }
  };
  void check();
  const timer = setInterval(() => void check(), 3_000);
  timer.unref();
  state.stop = () => clearInterval(timer);
  return state;
}
