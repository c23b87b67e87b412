// The queue suites (test/queue/): a real Redis, the built binary's `worker` and `jobs`, and a
// unique queue name per test file, removed afterwards (the Redis is shared with other runs).
//
// Redis is found through ENDPOINT_SERVICE_TEST_REDIS_URL, else 127.0.0.1:6379, else a
// redis-server from PATH started on a free port. Without any, the suites are skipped with one
// line saying how to enable them; under CI=true a missing Redis fails the run.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { ROOT, type Exit } from './serve.js';

const BIN = path.join(ROOT, 'bin/endpoint-service.js');
export const QUEUE_KEY = randomBytes(32).toString('base64');

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, host, () => {
      socket.write('PING\r\n');
      socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
    });
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface OwnRedis {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** A redis-server of the test's own (for restarts and outages), or null when none is on PATH. */
export async function spawnRedis(args: readonly string[] = ['--save', '', '--appendonly', 'no'], port?: number, dir?: string): Promise<OwnRedis | null> {
  if (spawnSync('redis-server', ['--version']).status !== 0) return null;
  const p = port ?? (await freePort());
  const directory = dir ?? mkdtempSync(path.join(tmpdir(), 'es-redis-'));
  const child = spawn('redis-server', ['--port', String(p), '--bind', '127.0.0.1', '--dir', directory, ...args], { stdio: 'ignore' });
  for (let i = 0; i < 100 && !(await reachable('127.0.0.1', p)); i++) await new Promise((r) => setTimeout(r, 50));
  return {
    url: `redis://127.0.0.1:${p}`,
    port: p,
    child,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      if (dir === undefined) rmSync(directory, { recursive: true, force: true });
    },
  };
}

let spawned: OwnRedis | null = null;

/** The Redis URL for the queue suites, or null (skip) with the reason printed once. */
export async function testRedisUrl(): Promise<string | null> {
  const given = process.env.ENDPOINT_SERVICE_TEST_REDIS_URL;
  if (given !== undefined && given !== '') return given;
  if (await reachable('127.0.0.1', 6379)) return 'redis://127.0.0.1:6379';
  spawned ??= await spawnRedis();
  if (spawned !== null) return spawned.url;
  const message = 'no Redis for the queue suites: set ENDPOINT_SERVICE_TEST_REDIS_URL, run Redis on 127.0.0.1:6379, or put redis-server on PATH (apt-get install redis-server)';
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`skipped: ${message}`);
  return null;
}

export async function stopSpawnedRedis(): Promise<void> {
  await spawned?.stop();
  spawned = null;
}

export function uniqueQueueName(label: string): string {
  return `es-test-${label}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** A BullMQ Queue on the test's queue, to look at jobs as they are stored (and remove them afterwards). */
export function inspect(url: string, name: string): { queue: Queue; redis: Redis; close(): Promise<void> } {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection: redis });
  return {
    queue,
    redis,
    close: async () => {
      await queue.obliterate({ force: true }).catch(() => {});
      await queue.close();
      await redis.quit();
    },
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
export function startWorker(file: string, url: string, name: string, args: readonly string[] = [], env: Record<string, string | undefined> = {}): RunningWorker {
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
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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
