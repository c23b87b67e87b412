// Opens the store a queue URL names. bullmq and ioredis are loaded here, on first use, as got
// and nodemailer are: validate, dry-run and serve without --queue never load them
// (test/queue/lazy.e2e.test.ts), so their start-up is what it was.

import type { Queue, Worker, Processor, WorkerOptions, QueueOptions } from 'bullmq';
import type { Redis as RedisClient, RedisOptions } from 'ioredis';
import { POSTGRES_VOID_JOB, redisVoidArguments, VOID_JOB_SCRIPT, VOID_PROGRESS, voidRecordData, type JobFate } from './fate.js';
import {
  announcementLifeMs,
  CLAIM_LOCK_DURATION_SCRIPT,
  lockDurationKey,
  POSTGRES_CLAIM_LOCK_DURATION,
  POSTGRES_CREATE_LOCK_DURATION_TABLE,
} from './lock-agreement.js';
import { FENCED_PROGRESS_SCRIPT, jobKeys, POSTGRES_FENCED_PROGRESS } from './fenced-progress.js';
import type { QueueObserver } from './observer.js';
import { restartablePostgresBackend, type PostgresBackendFactory } from './postgres-backend.js';
import type { QueueSettings } from './settings.js';
import { watchPostgres, watchStore } from './store-health.js';
import { describeStoreFailure } from './store-errors.js';

export type Bullmq = typeof import('bullmq');

let loaded: Promise<{ bullmq: Bullmq; Redis: typeof RedisClient }> | null = null;

export function loadEngine(): Promise<{ bullmq: Bullmq; Redis: typeof RedisClient }> {
  loaded ??= Promise.all([import('bullmq'), import('ioredis')]).then(([bullmq, ioredis]) => ({ bullmq, Redis: ioredis.Redis }));
  return loaded;
}

/** The names our scripts are defined under on a connection (ioredis defineCommand). */
const VOID_JOB_COMMAND = 'endpointServiceVoidJob';
const FENCED_PROGRESS_COMMAND = 'endpointServiceWriteProgress';
const CLAIM_LOCK_DURATION_COMMAND = 'endpointServiceClaimLockDuration';

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

/** ioredis's refusal of a command on a connection without an offline queue that is not ready: the command was not written. */
const UNSENT_MESSAGE = "Stream isn't writeable and enableOfflineQueue options is false";

const VOID_PROGRESS_JSON = JSON.stringify(VOID_PROGRESS);

export interface Store {
  readonly bullmq: Bullmq;
  newQueue(options?: Partial<QueueOptions>): Queue;
  newWorker(processor: Processor, options: Omit<WorkerOptions, 'connection'>): Worker;
  /** Whether the store answers, kept up to date and logged on changes; Redis also checks its persistence and eviction settings. */
  watch(observer: QueueObserver): { readonly up: boolean; stop(): void };
  /** Resolves once the store answers; rejects when it cannot be reached. */
  ping(): Promise<void>;
  /** Whether the store answers now (a store that is down has nothing to close politely); PostgreSQL is asked. */
  answers(): Promise<boolean>;
  /**
   * Resolves true once a command given now goes to the store, false when it would be refused
   * unsent (Redis: a connection that was up and is lost; the producer's has no offline queue).
   * A connection still being made is waited for: BullMQ would hold a command until then, and send
   * it after the caller has given up on it. The caller bounds the wait. PostgreSQL: true.
   */
  ready(): Promise<boolean>;
  /** Whether ready() would resolve true at once: a command given now goes to the store. */
  connected(): boolean;
  /** Whether `error`, from a command, says the command never left this process (nothing of it can land later). */
  sentNothing(error: unknown): boolean;
  /** Makes a job void unless a consumer has fetched it (fate.ts); resolves to the fate that holds. `endpoint` and `requestId`: the job's. */
  voidJob(jobId: string, endpoint: string, requestId: string): Promise<JobFate>;
  /**
   * Writes a job's progress record, given as JSON text, if `token` still holds its lock, in one
   * step (fenced-progress.ts); false: another worker holds it, or nobody.
   */
  writeProgress(jobId: string, token: string, progressJson: string): Promise<boolean>;
  /** Announces this consumer's lock duration for the queue, unless another is announced and not expired (lock-agreement.ts); resolves to the one that holds. */
  claimLockDuration(lockMs: number): Promise<number>;
  close(): Promise<void>;
}

/** Connections for `role` to the store of `settings`. Errors of the connection go to `onError` (never unhandled). */
export async function openStore(settings: QueueSettings, role: ConnectionRole, onError: (error: Error) => void): Promise<Store> {
  if (settings.backend === 'postgres') return openPostgres(settings, role, onError);
  const { bullmq, Redis } = await loadEngine();
  const clients: RedisClient[] = [];
  const connect = (r: ConnectionRole) => {
    const client = new Redis(settings.url, redisOptions(r));
    client.on('error', onError);
    clients.push(client);
    return client;
  };
  const client = connect(role);
  // By their SHA (EVALSHA), as BullMQ sends its own scripts: a script's text is not sent and
  // hashed again for every job; ioredis sends it once more when Redis has forgotten it.
  client.defineCommand(VOID_JOB_COMMAND, { numberOfKeys: 2, lua: VOID_JOB_SCRIPT });
  client.defineCommand(FENCED_PROGRESS_COMMAND, { numberOfKeys: 2, lua: FENCED_PROGRESS_SCRIPT });
  client.defineCommand(CLAIM_LOCK_DURATION_COMMAND, { numberOfKeys: 1, lua: CLAIM_LOCK_DURATION_SCRIPT });
  const scripts = client as unknown as {
    [VOID_JOB_COMMAND](jobKey: string, lockKey: string, progress: string, ms: number, name: string, data: string, now: number): Promise<unknown>;
    [FENCED_PROGRESS_COMMAND](jobKey: string, lockKey: string, token: string, progress: string): Promise<unknown>;
    [CLAIM_LOCK_DURATION_COMMAND](key: string, lockMs: number, lifeMs: number): Promise<unknown>;
  };
  let wasReady = false;
  // The first connection, which commands wait for (one listener, however many wait).
  const firstReady = new Promise<void>((resolve) =>
    client.once('ready', () => {
      wasReady = true;
      resolve();
    }),
  );
  const closables: { close(): Promise<void> }[] = [];
  return {
    bullmq,
    watch: (observer) => watchStore(client, observer, (error) => describeStoreFailure(error, settings.url)),
    ping: async () => {
      await client.ping();
    },
    answers: async () => client.status === 'ready',
    connected: () => client.status === 'ready',
    ready: async () => {
      if (client.status === 'ready') return true;
      if (wasReady) return false;
      await firstReady;
      return true;
    },
    sentNothing: (error) => error instanceof Error && error.message === UNSENT_MESSAGE,
    // On the connection the queue adds jobs through: a void follows the add it undoes. A
    // connection still being made is waited for, as BullMQ waits with the add.
    voidJob: async (jobId, endpoint, requestId) => {
      if (!wasReady) await firstReady;
      const held = await scripts[VOID_JOB_COMMAND](...jobKeys(settings.name, jobId), ...redisVoidArguments(endpoint, requestId));
      return held === 'void' ? 'void' : 'started';
    },
    writeProgress: async (jobId, token, progressJson) => (await scripts[FENCED_PROGRESS_COMMAND](...jobKeys(settings.name, jobId), token, progressJson)) === 1,
    claimLockDuration: async (lockMs) => Number(await scripts[CLAIM_LOCK_DURATION_COMMAND](lockDurationKey(settings.name), lockMs, announcementLifeMs(lockMs))),
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

/**
 * BullMQ's PostgreSQL backend (experimental): the same queue classes over a `pg` pool per queue
 * and worker, its schema migrated on first use. PostgreSQL keeps what it commits, so there is
 * no persistence check; a dedicated one-connection pool answers health and ping.
 */
/** What is used of pg's Pool (the package ships no types of its own). */
interface PgPool {
  query(text: string, values?: readonly unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  on(event: 'error', listener: (error: Error) => void): void;
  end(): Promise<void>;
}
const PG_MODULE = 'pg';
/** Connection errors that leave nothing sent: the server was never reached. */
const UNSENT_PG_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

async function openPostgres(settings: QueueSettings, role: ConnectionRole, onError: (error: Error) => void): Promise<Store> {
  const [bullmq, pg] = await Promise.all([import('bullmq'), import(PG_MODULE) as Promise<{ default: { Pool: new (config: object) => PgPool } }>]);
  const connection = { connectionString: settings.url, migrate: true, connectionTimeoutMillis: 2_000 };
  const probe = new pg.default.Pool({ connectionString: settings.url, max: 1, connectionTimeoutMillis: 2_000 });
  probe.on('error', onError);
  let connected = false;
  const ping = async () => {
    try {
      await probe.query('SELECT 1');
      connected = true;
    } catch (error) {
      connected = false;
      throw error;
    }
  };
  const closables: { close(): Promise<void> }[] = [];
  // The voids (fate.ts) and fenced progress writes (fenced-progress.ts), on BullMQ's job rows.
  let fates: PgPool | null = null;
  const fatePool = (): PgPool => {
    if (fates === null) {
      fates = new pg.default.Pool({ connectionString: settings.url, max: 2, connectionTimeoutMillis: 2_000 });
      fates.on('error', onError);
    }
    return fates;
  };
  let schemaReady: (() => Promise<unknown>) | null = null;
  const backend = restartablePostgresBackend(bullmq.createPostgresBackend as unknown as PostgresBackendFactory) as unknown as undefined;
  return {
    bullmq,
    watch: (observer) => watchPostgres(ping, observer, (error) => describeStoreFailure(error, settings.url)),
    ping,
    // No connection events to go by: asked, which a refused connection answers at once.
    answers: () =>
      ping().then(
        () => true,
        () => false,
      ),
    ready: async () => true,
    connected: () => true,
    sentNothing: (error) => typeof error === 'object' && error !== null && UNSENT_PG_CODES.has(String((error as { code?: unknown }).code)),
    voidJob: async (jobId, endpoint, requestId) => {
      // BullMQ's schema, which its first operation migrates (the add being undone waits for it too).
      await schemaReady?.();
      const now = Date.now();
      return (await fatePool().query(POSTGRES_VOID_JOB, [settings.name, jobId, endpoint, VOID_PROGRESS_JSON, now, voidRecordData(endpoint, requestId, now)]))
        .rows.length > 0
        ? 'void'
        : 'started';
    },
    claimLockDuration: postgresLockClaims(fatePool, settings.name),
    writeProgress: async (jobId, token, progressJson) =>
      (await fatePool().query(POSTGRES_FENCED_PROGRESS, [settings.name, jobId, token, progressJson])).rows.length === 1,
    newQueue(options = {}) {
      const queue = new bullmq.Queue(settings.name, { ...options, connection } as unknown as QueueOptions, backend);
      queue.on('error', onError);
      schemaReady ??= () => queue.waitUntilReady();
      closables.push(queue);
      return queue;
    },
    newWorker(processor, options) {
      const worker = new bullmq.Worker(settings.name, processor, { ...options, connection } as unknown as WorkerOptions, backend);
      worker.on('error', onError);
      closables.push(worker);
      return worker;
    },
    async close() {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled(closables.map((c) => c.close())),
        new Promise((resolve) => (timer = setTimeout(resolve, connected ? 10_000 : 500))),
      ]);
      clearTimeout(timer);
      await probe.end().catch(() => {});
      await fates?.end().catch(() => {});
    },
  };
}

/** The lock durations announced (lock-agreement.ts), in a table of their own, made on first use. */
function postgresLockClaims(pool: () => PgPool, queue: string): (lockMs: number) => Promise<number> {
  let table: Promise<unknown> | null = null;
  return async (lockMs) => {
    table ??= pool()
      .query(POSTGRES_CREATE_LOCK_DURATION_TABLE)
      .catch((error: unknown) => {
        table = null;
        throw error;
      });
    await table;
    return Number((await pool().query(POSTGRES_CLAIM_LOCK_DURATION, [queue, lockMs, announcementLifeMs(lockMs)])).rows[0]?.lock_ms ?? lockMs);
  };
}
