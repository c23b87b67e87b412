// The Redis every suite that needs one uses (the queue suites, shared rate limits, ALTCHA's spent
// solutions): ENDPOINT_SERVICE_TEST_REDIS_URL, else 127.0.0.1:6379, else a redis-server from PATH
// started on a free port. Without any, the suite is skipped with one line saying how to enable
// it; under CI=true a missing Redis fails the run instead.
//
// That Redis may be shared with other runs and with whatever a developer keeps in it: a suite
// writes only under keys of its own (uniqueKeyPrefix) and removes them (deleteKeys).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

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

export function redisServerOnPath(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0;
}

/** A redis-server of the test's own (for restarts and outages), or null when none is on PATH. */
export async function spawnRedis(args: readonly string[] = ['--save', '', '--appendonly', 'no'], port?: number, dir?: string): Promise<OwnRedis | null> {
  if (!redisServerOnPath()) return null;
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

/** The Redis URL for the suites that need one, or null (skip) with the reason printed once. */
export async function testRedisUrl(): Promise<string | null> {
  const given = process.env.ENDPOINT_SERVICE_TEST_REDIS_URL;
  if (given !== undefined && given !== '') return given;
  if (await reachable('127.0.0.1', 6379)) return 'redis://127.0.0.1:6379';
  spawned ??= await spawnRedis();
  if (spawned !== null) return spawned.url;
  const message = 'no Redis for the suites that need one: set ENDPOINT_SERVICE_TEST_REDIS_URL, run Redis on 127.0.0.1:6379, or put redis-server on PATH (apt-get install redis-server)';
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`skipped: ${message}`);
  return null;
}

/** Stops the redis-server testRedisUrl started, if it started one (in the suite's afterAll). */
export async function stopSpawnedRedis(): Promise<void> {
  await spawned?.stop();
  spawned = null;
}

/** A key prefix no other run uses, for --rate-limit-prefix and the like. */
export function uniqueKeyPrefix(label: string): string {
  return `endpoint-service-test:${label}:${process.pid}-${randomBytes(4).toString('hex')}:`;
}

/** The keys under `prefix` (SCAN, not KEYS: the Redis may be large and shared). */
export async function keysUnder(url: string, prefix: string): Promise<string[]> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      found.push(...keys);
      cursor = next;
    } while (cursor !== '0');
    return found;
  } finally {
    redis.disconnect();
  }
}

/** Removes every key starting with one of `prefixes`. */
export async function deleteKeys(url: string, prefixes: readonly string[]): Promise<void> {
  const keys = (await Promise.all(prefixes.map((p) => keysUnder(url, p)))).flat();
  if (keys.length === 0) return;
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
  } finally {
    redis.disconnect();
  }
}
