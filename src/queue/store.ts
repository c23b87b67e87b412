// Opens the store a queue URL names. bullmq and ioredis are loaded here, on first use, as got
// and nodemailer are: validate, dry-run and serve without --queue never load them
// (test/queue/lazy.test.ts), so their start-up is what it was.

import type { Queue, Worker, Processor, WorkerOptions, QueueOptions } from 'bullmq';
import type { Redis as RedisClient, RedisOptions } from 'ioredis';
import type { QueueSettings } from './settings.js';

export type Bullmq = typeof import('bullmq');

let loaded: Promise<{ bullmq: Bullmq; Redis: typeof RedisClient }> | null = null;

export function loadEngine(): Promise<{ bullmq: Bullmq; Redis: typeof RedisClient }> {
  loaded ??= Promise.all([import('bullmq'), import('ioredis')]).then(([bullmq, ioredis]) => ({ bullmq, Redis: ioredis.Redis }));
  return loaded;
}

/** What each use needs of its connection. */
export type ConnectionRole =
  /** serve's enqueue: fails at once while the store is down (no offline queue), so the answer can be a 503. */
  | 'producer'
  /** A BullMQ Worker: blocking commands, retried for ever. */
  | 'worker'
  /** jobs …: a command that should fail, not hang, when the store is down. */
  | 'admin';

export function redisOptions(role: ConnectionRole): RedisOptions {
  const common: RedisOptions = { connectTimeout: 2_000, retryStrategy: (times) => Math.min(200 * times, 2_000), lazyConnect: false };
  switch (role) {
    case 'producer':
      return { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 1 };
    case 'worker':
      return { ...common, maxRetriesPerRequest: null };
    case 'admin':
      return { ...common, maxRetriesPerRequest: 1, retryStrategy: (times) => (times > 3 ? null : 300) };
  }
}

export interface Store {
  readonly bullmq: Bullmq;
  newQueue(options?: Partial<QueueOptions>): Queue;
  newWorker(processor: Processor, options: Omit<WorkerOptions, 'connection'>): Worker;
  /** A plain client for checks (CONFIG GET) and health. */
  readonly client: RedisClient;
  close(): Promise<void>;
}

/** Connections for `role` to the store of `settings`. Errors of the connection go to `onError` (never unhandled). */
export async function openStore(settings: QueueSettings, role: ConnectionRole, onError: (error: Error) => void): Promise<Store> {
  if (settings.backend !== 'redis') throw new Error('only Redis stores are supported by this version');
  const { bullmq, Redis } = await loadEngine();
  const clients: RedisClient[] = [];
  const connect = (r: ConnectionRole) => {
    const client = new Redis(settings.url, redisOptions(r));
    client.on('error', onError);
    clients.push(client);
    return client;
  };
  const client = connect(role);
  const closables: { close(): Promise<void> }[] = [];
  return {
    bullmq,
    client,
    newQueue(options = {}) {
      const queue = new bullmq.Queue(settings.name, { ...options, connection: client });
      queue.on('error', onError);
      closables.push(queue);
      return queue;
    },
    newWorker(processor, options) {
      const worker = new bullmq.Worker(settings.name, processor, { ...options, connection: connect('worker') });
      worker.on('error', onError);
      closables.push(worker);
      return worker;
    },
    async close() {
      // A store that is down has nothing to be closed politely: BullMQ's close would wait for it.
      const down = client.status !== 'ready';
      for (const c of clients) if (c.status !== 'ready') c.disconnect();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled(closables.map((c) => c.close())), new Promise((resolve) => (timer = setTimeout(resolve, down ? 200 : 10_000)))]);
      clearTimeout(timer);
      await Promise.allSettled(clients.map((c) => (c.status === 'ready' ? c.quit().catch(() => c.disconnect()) : c.disconnect())));
    },
  };
}
