// restartablePostgresBackend against BullMQ's own PostgreSQL backend: a start that failed (the
// store was down) is tried again by the next operation, instead of failing it for good. With a
// port where nothing listens yet, then a proxy to the test's PostgreSQL on that port.
import { createServer, connect, type Socket } from 'node:net';
import { createPostgresBackend } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { restartablePostgresBackend, type PostgresBackendFactory } from '../../src/queue/postgres-backend.js';
import { freePort, uniqueQueueName } from '../helpers/queue.js';

const url = process.env.ENDPOINT_SERVICE_TEST_POSTGRES_URL || null;

describe.skipIf(url === null)('a PostgreSQL backend whose first start failed', () => {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const target = new URL(url!);
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        upstream.destroy();
        client.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  afterAll(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });

  it('starts again on the next operation once the store answers', async () => {
    const port = await freePort();
    const proxied = new URL(url!);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(port);
    const factory = restartablePostgresBackend(createPostgresBackend as unknown as PostgresBackendFactory);
    const backend = factory(
      uniqueQueueName('pg-start'),
      { connection: { connectionString: proxied.toString(), migrate: true, connectionTimeoutMillis: 2_000 } },
      {},
    ) as unknown as {
      waitUntilReady(): Promise<void>;
      getCounts(types: string[]): Promise<number[]>;
      close(): Promise<void>;
    };
    try {
      await expect(backend.waitUntilReady()).rejects.toThrow(/ECONNREFUSED/);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      await backend.waitUntilReady();
      expect(await backend.getCounts(['waiting'])).toEqual([0]);
    } finally {
      await backend.close();
    }
  });
});
