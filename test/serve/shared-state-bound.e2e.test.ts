// The bound on every shared-state command (src/server/shared-state.ts, boundCommands): a command
// whose answer never comes fails after the bound; one whose answer came while this process was
// itself held up (a busy start, a loaded machine) is answered, not failed. A Redis found as every
// suite finds it, and a socket that accepts and never answers (as a stalled Redis does).
import { createServer, type Server, type Socket } from 'node:net';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { boundCommands } from '../../src/server/shared-state.js';
import { stopSpawnedRedis, testRedisUrl } from '../helpers/redis.js';

const REDIS_URL = await testRedisUrl();
const BOUND_MS = 50;

const clients: Redis[] = [];
const sockets = new Set<Socket>();
let silent: Server | undefined;
afterAll(async () => {
  for (const c of clients) c.disconnect();
  for (const s of sockets) s.destroy();
  silent?.close();
  await stopSpawnedRedis();
});

function client(url: string, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null, ...options });
  redis.on('error', () => {});
  boundCommands(redis, BOUND_MS);
  clients.push(redis);
  return redis;
}

function holdUp(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    /* the event loop is held, as by a busy start */
  }
}

describe('the bound on shared-state commands', () => {
  it.skipIf(REDIS_URL === null)('answers a command whose answer came while the process was held up past the bound', async () => {
    const redis = client(REDIS_URL!);
    await new Promise((resolve) => redis.once('ready', resolve));
    for (let i = 0; i < 5; i++) {
      const answer = redis.ping();
      holdUp(BOUND_MS * 4);
      await expect(answer).resolves.toBe('PONG');
    }
  });

  it('fails a command whose answer does not come, after the bound', async () => {
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    // No ready check: the connection is ready once open, and the silence starts with the first command.
    const redis = client(`redis://127.0.0.1:${port}`, { enableReadyCheck: false });
    await new Promise((resolve) => redis.once('ready', resolve));
    const started = Date.now();
    await expect(redis.ping()).rejects.toThrow('Command timed out');
    expect(Date.now() - started).toBeGreaterThanOrEqual(BOUND_MS - 1);
  });
});
