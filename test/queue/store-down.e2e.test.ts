// A store the test may take down: the queued job kept across a restart of the store, a store
// that is down (503, or the tasks run in-process with --queue-fallback), and the start-up warning
// about a Redis that keeps nothing on disk. The shared stores must not be stopped: Redis runs as a
// redis-server of the test's own, PostgreSQL behind a TCP proxy of the test's own (stoppableStore).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import {
  eventually,
  inspect,
  itExceptOn,
  QUEUE_KEY,
  queueBackends,
  queueFixture,
  redisServerOnPath,
  runsOn,
  spawnRedis,
  startWorker,
  stoppableStore,
  uniqueQueueName,
  type OwnRedis,
  type RunningWorker,
  type StoppableStore,
} from '../helpers/queue.js';

// queueBackends decides whether the Redis suites run here at all (and fails under CI=true without one).
const backends = (await queueBackends()).map((backend) => {
  if (backend.name !== 'redis' || backend.url === null || redisServerOnPath()) return backend;
  const message = 'no redis-server on PATH for the suites that stop and restart their own Redis (apt-get install redis-server)';
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`skipped: ${message}`);
  return { ...backend, url: null, skipped: message };
});
const name = uniqueQueueName('down');

describe.each(backends)('a store that goes down on %s', (backend) => {
  if (!runsOn(backend)) return;
  let peer: HttpPeer;
  const services: RunningService[] = [];
  const workers: RunningWorker[] = [];
  const stores: (OwnRedis | StoppableStore)[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'es-aof-'));
  const env = () => ({ PEER: peer.origin, ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY });
  const serveOn = async (url: string, ...args: string[]) => {
    const s = await startServe(
      queueFixture('durable'),
      ['--queue', url, '--queue-name', name, '--no-queue-consume', '--smtp-url', 'smtp://127.0.0.1:1', ...args],
      env(),
    );
    services.push(s);
    return s;
  };
  const stoppable = async () => {
    const store = (await stoppableStore(backend))!;
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/fine', { status: 200 });
    peer.route('/picky', { status: 200 });
  });
  afterAll(async () => {
    await Promise.all([...workers.map((w) => w.stop('SIGKILL')), ...services.map((s) => s.stop('SIGKILL'))]);
    await Promise.all(stores.map((s) => s.stop()));
    // Jobs the PostgreSQL suites stored through the proxy are in the shared server.
    if (backend.name === 'postgres') await inspect(backend, name).close();
    await peer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  itExceptOn(
    backend,
    'postgres',
    'the shared server cannot be restarted by a test, and it keeps what it commits',
  )('keeps a queued job across a restart of the store, and a worker completes it', async () => {
    const redis = (await spawnRedis(['--appendonly', 'yes', '--appendfsync', 'always', '--save', ''], undefined, dir))!;
    stores.push(redis);
    const serve = await serveOn(redis.url);
    const response = await fetch(`${serve.url}/two`, { method: 'POST' });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    // The Redis of this store keeps its data: no warning about it (the warnings follow this line).
    expect(await serve.waitForLog((l) => l.msg === 'queue store configuration')).toMatchObject({ appendonly: 'yes' });
    expect(serve.logs().some((l) => String(l.msg).includes('keeps nothing on disk'))).toBe(false);

    await redis.stop();
    const again = (await spawnRedis(['--appendonly', 'yes', '--appendfsync', 'always', '--save', ''], redis.port, dir))!;
    stores.push(again);
    const store = inspect({ ...backend, url: again.url }, name);
    try {
      const [job] = await store.queue.getJobs(['waiting']);
      expect(job!.data.requestId).toBe(requestId);
      workers.push(startWorker(queueFixture('durable'), again.url, name, ['--smtp-url', 'smtp://127.0.0.1:1'], { PEER: peer.origin }));
      await eventually(async () => ((await store.queue.getJobState(job!.id!)) === 'completed' ? true : undefined), 'the job to complete after the restart');
      expect(peer.requestsTo('/fine').length).toBe(1);
      // serve reconnected by itself: it enqueues again.
      expect((await fetch(`${serve.url}/two`, { method: 'POST' })).status).toBe(200);
    } finally {
      await store.close();
    }
  });

  it('answers 503 with Retry-After while the store is down, and says so in /_health (still 200)', async () => {
    const store = await stoppable();
    const serve = await serveOn(store.url);
    await serve.waitForLog((l) => l.msg === 'the queue store is reachable');
    // A Redis without persistence is worth a warning at start-up (PostgreSQL keeps what it commits).
    if (backend.name === 'redis') await serve.waitForLog((l) => String(l.msg).includes('keeps nothing on disk'));
    await store.stop();
    const before = peer.requestsTo('/fine').length;
    const response = await fetch(`${serve.url}/two`, { method: 'POST' });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(((await response.json()) as { detail: string }).detail).toMatch(/could not be queued/);
    // Redis reports a lost connection at once; PostgreSQL is asked every few seconds.
    const health = await eventually(async () => {
      const answer = await fetch(`${serve.url}/_health`);
      const body = (await answer.json()) as { queue: string };
      return body.queue === 'unreachable' ? { status: answer.status, body } : undefined;
    }, '/_health to say the store is unreachable');
    expect(health).toEqual({ status: 200, body: { status: 'ok', queue: 'unreachable' } });
    expect(peer.requestsTo('/fine').length).toBe(before);
    const metrics = await (await fetch(`${serve.url}/_metrics`)).text();
    expect(metrics).toMatch(/endpoint_service_queue_enqueued_total\{endpoint="two",outcome="refused"\} 1/);
    expect(metrics).toMatch(/endpoint_service_queue_up 0/);
  });

  it('runs the tasks in-process with --queue-fallback in-process while the store is down', async () => {
    const store = await stoppable();
    const serve = await serveOn(store.url, '--queue-fallback', 'in-process');
    await serve.waitForLog((l) => l.msg === 'the queue store is reachable');
    await store.stop();
    // Once serve knows the store is down. A request that meets a connection dying under it cannot
    // know whether its job landed, and is answered 503 until the void is confirmed (late-job.e2e).
    await eventually(
      async () => (((await (await fetch(`${serve.url}/_health`)).json()) as { queue: string }).queue === 'unreachable' ? true : undefined),
      '/_health to say the store is unreachable',
    );
    const before = peer.requestsTo('/fine').length;
    const response = await fetch(`${serve.url}/two`, { method: 'POST' });
    expect(response.status).toBe(200);
    await peer.waitForRequests(before + 1, '/fine');
    await serve.waitForLog((l) => l.msg === 'the queue cannot take the run; running its tasks in this process');
    const metrics = await (await fetch(`${serve.url}/_metrics`)).text();
    expect(metrics).toMatch(/endpoint_service_queue_enqueued_total\{endpoint="two",outcome="in-process"\} 1/);
  });

  it('takes runs again once a store that was down at start-up is up: serve queues them, a worker runs them', async () => {
    const store = await stoppable();
    await store.stop();
    const serve = await serveOn(store.url);
    const worker = startWorker(queueFixture('durable'), store.url, name, ['--smtp-url', 'smtp://127.0.0.1:1'], { PEER: peer.origin });
    workers.push(worker);
    await serve.waitForLog((l) => l.msg === 'the queue store is unreachable; retrying');
    expect((await fetch(`${serve.url}/two`, { method: 'POST' })).status).toBe(503);
    await store.start();
    const before = peer.requestsTo('/fine').length;
    await eventually(async () => ((await fetch(`${serve.url}/two`, { method: 'POST' })).status === 200 ? true : undefined), 'serve to queue runs again');
    // Redis reconnects within 2 s; BullMQ's PostgreSQL worker tries a failed start again after 15 s.
    await eventually(() => (peer.requestsTo('/fine').length > before ? true : undefined), 'the worker to run the job', 40_000);
    // The store being down is said once, as unreachable: the start-up removal of old failed jobs
    // waits for it instead of failing beside it.
    expect(worker.logs().filter((l) => String(l.msg).includes('--queue-retention'))).toEqual([]);
  }, 60_000);

  it('lets a worker whose store is down stop at once on SIGTERM: nothing runs, nothing waits for the store', async () => {
    const store = await stoppable();
    const worker = startWorker(queueFixture('durable'), store.url, name, ['--smtp-url', 'smtp://127.0.0.1:1'], { PEER: peer.origin });
    workers.push(worker);
    await worker.waitForLog((l) => l.msg === 'the queue store is reachable');
    await store.stop();
    await worker.waitForLog((l) => l.msg === 'the queue store is unreachable; retrying');
    // Far below BullMQ's own wait for a connection when it closes a worker (about 10 s).
    const exit = await Promise.race([worker.stop('SIGTERM'), new Promise((resolve) => setTimeout(() => resolve('still running'), 5_000))]);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(worker.logs().some((l) => l.msg === 'shutdown complete')).toBe(true);
    // A connection lost under the store's client library is said once, as unreachable.
    expect(worker.logs().filter((l) => l.msg === 'uncaught exception')).toEqual([]);
  });
});
