// The queue suites (test/queue/): a real store, the built binary's `worker` and `jobs`, and a
// unique queue name per test file, removed afterwards (the stores are shared with other runs).
//
// Each suite is written once and runs on every store of queueBackends(): Redis always, and
// BullMQ's PostgreSQL backend when ENDPOINT_SERVICE_TEST_POSTGRES_URL is set (CI sets it).
// Redis is found as every suite finds it (helpers/redis.ts): ENDPOINT_SERVICE_TEST_REDIS_URL,
// else 127.0.0.1:6379, else a redis-server from PATH on a free port, else the Redis suites are
// skipped with one line (under CI=true a missing Redis fails the run).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Socket } from 'node:net';
import path from 'node:path';
import { Queue, createPostgresBackend } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { it } from 'vitest';
import { parseQueueKey } from '../../src/queue/seal.js';
import type { QueueSettings } from '../../src/queue/settings.js';
import { spawnRedis, testRedisUrl } from './redis.js';
import { ROOT, type Exit } from './serve.js';

export { freePort, redisServerOnPath, spawnRedis, stopSpawnedRedis, testRedisUrl, type OwnRedis } from './redis.js';

const BIN = path.join(ROOT, 'bin/endpoint-service.js');
export const QUEUE_KEY = randomBytes(32).toString('base64');

export function uniqueQueueName(label: string): string {
  return `es-test-${label}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

export type BackendName = 'redis' | 'postgres';

/** A store the queue suites run on; `url` is null when it is not available here (`skipped` says why). */
export interface QueueBackend {
  readonly name: BackendName;
  readonly url: string | null;
  readonly skipped: string | null;
  toString(): string;
}

export type AvailableBackend = QueueBackend & { readonly url: string };

const LABELS: Readonly<Record<BackendName, string>> = { redis: 'Redis', postgres: 'PostgreSQL' };

/**
 * The stores for `describe.each`: Redis always (skipped without one), PostgreSQL when
 * ENDPOINT_SERVICE_TEST_POSTGRES_URL is set. `%s` in the title prints the store's name.
 */
export async function queueBackends(): Promise<QueueBackend[]> {
  const redis = await testRedisUrl();
  const postgres = process.env.ENDPOINT_SERVICE_TEST_POSTGRES_URL;
  const backend = (name: BackendName, url: string | null, skipped: string | null): QueueBackend => ({ name, url, skipped, toString: () => LABELS[name] });
  return [
    backend('redis', redis, redis === null ? 'no Redis here (see the line above)' : null),
    ...(postgres !== undefined && postgres !== '' ? [backend('postgres', postgres, null)] : []),
  ];
}

/** The Redis store alone, for a suite about something other than the store (tracing, say). */
export function redisBackend(url: string): AvailableBackend {
  return { name: 'redis', url, skipped: null, toString: () => LABELS.redis };
}

/** In a `describe.each(queueBackends())` body: false, with a skipped test saying why, when the store is not available. */
/** What openStore needs to reach `backend` for queue `name`, with a key of its own: for tests of the store's own commands. */
export function storeSettings(backend: AvailableBackend, name: string): QueueSettings {
  const settings: Partial<QueueSettings> = { url: backend.url, backend: backend.name, name, keys: [parseQueueKey(randomBytes(32).toString('hex'))!] };
  return settings as QueueSettings;
}

export function runsOn(backend: QueueBackend): backend is AvailableBackend {
  if (backend.url !== null) return true;
  it.skip(`skipped: ${backend.skipped ?? 'not available'}`, () => {});
  return false;
}

/** `it`, except on `store`, where the test is skipped with the reason at the end of its title. */
export function itExceptOn(backend: QueueBackend, store: BackendName, reason: string): (title: string, fn: () => Promise<void>, timeoutMs?: number) => void {
  if (backend.name !== store) return (title, fn, timeoutMs) => it(title, fn, timeoutMs);
  return (title, fn, timeoutMs) => it.skip(`${title} (skipped on ${LABELS[store]}: ${reason})`, fn, timeoutMs);
}

export interface StoreInspector {
  /** A BullMQ Queue on the test's queue, to look at jobs as they are stored. */
  readonly queue: Queue;
  /** Everything stored for one job, as text (its fields, progress and log lines): to look for values in clear. */
  stored(jobId: string): Promise<string>;
  /** Removes the test's queue, and closes. */
  close(): Promise<void>;
}

/** A BullMQ Queue on the test's queue on either store, and the job's stored form read straight from the store. */
export function inspect(backend: AvailableBackend, name: string): StoreInspector {
  return backend.name === 'redis' ? inspectRedis(backend.url, name) : inspectPostgres(backend.url, name);
}

function inspectRedis(url: string, name: string): StoreInspector {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection: redis });
  return {
    queue,
    stored: async (jobId) => {
      const hash = await redis.hgetall(`bull:${name}:${jobId}`);
      const log = await redis.lrange(`bull:${name}:${jobId}:logs`, 0, -1);
      return [...Object.values(hash), ...log].join('\n');
    },
    close: async () => {
      await queue.obliterate({ force: true }).catch(() => {});
      // A void job's record stored before its job (src/queue/fate.ts) is in no set of BullMQ's.
      const left = await redis.keys(`bull:${name}:*`).catch(() => []);
      if (left.length > 0) await redis.del(...left).catch(() => {});
      await queue.close();
      await redis.quit();
    },
  };
}

/** The PostgreSQL backend keeps a job in one row of bullmq.job, its log lines in bullmq.job_log. */
function inspectPostgres(url: string, name: string): StoreInspector {
  const queue = new Queue(name, { connection: { connectionString: url, migrate: true } } as never, createPostgresBackend as never);
  const db = new pg.Pool({ connectionString: url, max: 1 });
  return {
    queue,
    stored: async (jobId) => {
      type Rows = { rows: { row: string }[] };
      const job = (await db.query('SELECT row_to_json(j)::text AS row FROM bullmq.job j WHERE queue = $1 AND id = $2', [name, jobId])) as Rows;
      const log = (await db.query('SELECT row FROM bullmq.job_log WHERE queue = $1 AND job_id = $2 ORDER BY idx', [name, jobId])) as Rows;
      return [...job.rows, ...log.rows].map((r) => r.row).join('\n');
    },
    close: async () => {
      await queue.obliterate({ force: true }).catch(() => {});
      // The lock duration its workers announced (src/queue/lock-agreement.ts), in a table of its own.
      await db.query('DELETE FROM endpoint_service_lock_duration WHERE queue = $1', [name]).catch(() => {});
      await queue.close();
      await db.end();
    },
  };
}

/** A store the test may take down, and bring back on the same URL, without touching the shared one. */
export interface StoppableStore {
  readonly url: string;
  stop(): Promise<void>;
  /** Up again, empty for a Redis of its own (it keeps nothing on disk). */
  start(): Promise<void>;
}

/**
 * A store the test may take down. Redis: a redis-server of its own (null when none is on PATH).
 * PostgreSQL: the shared server behind a TCP proxy of the test's own, which stopping closes, with
 * every connection through it (the shared server itself must not be stopped).
 */
export async function stoppableStore(backend: AvailableBackend): Promise<StoppableStore | null> {
  if (backend.name === 'postgres') return proxyTo(backend.url);
  let redis = await spawnRedis();
  if (redis === null) return null;
  const port = redis.port;
  return {
    url: redis.url,
    stop: () => redis!.stop(),
    start: async () => {
      redis = await spawnRedis(undefined, port);
    },
  };
}

/** A TCP proxy on a free port in front of the PostgreSQL server of `url`; the URL through it. */
async function proxyTo(url: string): Promise<StoppableStore> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const port = (server.address() as { port: number }).port;
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);
  return {
    url: proxied.toString(),
    stop: async () => {
      if (!server.listening) return;
      const closed = new Promise((resolve) => server.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
    },
    start: () => listen(port),
  };
}

export interface RunningWorker {
  readonly child: ChildProcess;
  readonly origin: Promise<string>;
  readonly stderr: () => string;
  readonly logs: () => Record<string, unknown>[];
  waitForLog(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  readonly exited: Promise<Exit>;
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/** Starts `endpoint-service worker FILE --queue URL --queue-name NAME --port 0 ARGS`. */
export function startWorker(
  file: string,
  url: string,
  name: string,
  args: readonly string[] = [],
  env: Record<string, string | undefined> = {},
): RunningWorker {
  const child = spawn(process.execPath, [BIN, 'worker', file, '--queue', url, '--queue-name', name, '--port', '0', '--log-format', 'json', ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ENDPOINT_SERVICE_SMTP_URL: undefined, ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    out += c;
    for (const l of listeners) l();
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    err += c;
    for (const l of listeners) l();
  });
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const logs = () =>
    err
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const waitFor = <T>(find: () => T | undefined, what: string, timeoutMs = 25_000): Promise<T> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`worker: no ${what} within ${timeoutMs} ms:\n${err}`));
      }, timeoutMs);
      const check = () => {
        const found = find();
        if (found !== undefined) {
          clearTimeout(timer);
          listeners.delete(check);
          resolve(found);
        }
      };
      listeners.add(check);
      void exited.then(() => {
        if (listeners.delete(check)) {
          clearTimeout(timer);
          reject(new Error(`worker exited while ${what} was awaited:\n${err}`));
        }
      });
      check();
    });
  const origin = waitFor(() => /endpoint-service worker listening on (\S+)/.exec(out)?.[1], 'ready line');
  origin.catch(() => {});
  return {
    child,
    origin,
    stderr: () => err,
    logs,
    waitForLog: (match, timeoutMs) => waitFor(() => logs().find(match), 'log line', timeoutMs),
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs `endpoint-service ARGS` to its end. */
export function runCli(args: readonly string[], env: Record<string, string | undefined> = {}): Promise<Exit & { stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Polls `check` until it returns a value other than undefined (no timing is asserted, only awaited). */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 25_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function queueFixture(name: string): string {
  return path.join(ROOT, `fixtures/queue/${name}/endpoints.xml`);
}
