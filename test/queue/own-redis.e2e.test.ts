// A Redis of the test's own, which the test may stop and restart (the shared one must not be):
// a store that keeps its data across a restart, a store that is down, and the start-up warning
// about a store that keeps nothing on disk.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import { eventually, inspect, QUEUE_KEY, queueFixture, spawnRedis, startWorker, testRedisUrl, uniqueQueueName, type OwnRedis, type RunningWorker } from '../helpers/queue.js';

// testRedisUrl decides whether queue suites run here at all (and fails under CI=true without one).
const shared = await testRedisUrl();
const probe = shared === null ? null : await spawnRedis();
await probe?.stop();
if (shared !== null && probe === null) {
  const message = 'no redis-server on PATH for the suites that restart their own Redis (apt-get install redis-server)';
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`skipped: ${message}`);
}
const name = uniqueQueueName('own');

describe.skipIf(probe === null)('a Redis of our own', () => {
  let peer: HttpPeer;
  const services: RunningService[] = [];
  const workers: RunningWorker[] = [];
  const redises: OwnRedis[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'es-aof-'));
  const env = () => ({ PEER: peer.origin, ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY });
  const serveOn = async (url: string, ...args: string[]) => {
    const s = await startServe(queueFixture('durable'), ['--queue', url, '--queue-name', name, '--no-queue-consume', '--smtp-url', 'smtp://127.0.0.1:1', ...args], env());
    services.push(s);
    return s;
  };

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/fine', { status: 200 });
    peer.route('/picky', { status: 200 });
  });
  afterAll(async () => {
    await Promise.all([...workers.map((w) => w.stop('SIGKILL')), ...services.map((s) => s.stop('SIGKILL'))]);
    await Promise.all(redises.map((r) => r.stop()));
    await peer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a queued job across a restart of a Redis with appendonly, and a worker completes it', async () => {
    const redis = (await spawnRedis(['--appendonly', 'yes', '--appendfsync', 'always', '--save', ''], undefined, dir))!;
    redises.push(redis);
    const serve = await serveOn(redis.url);
    const response = await fetch(`${serve.url}/two`, { method: 'POST' });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    // The Redis of this store keeps its data: no warning about it (the warnings follow this line).
    expect(await serve.waitForLog((l) => l.msg === 'queue store configuration')).toMatchObject({ appendonly: 'yes' });
    expect(serve.logs().some((l) => String(l.msg).includes('keeps nothing on disk'))).toBe(false);

    await redis.stop();
    const again = (await spawnRedis(['--appendonly', 'yes', '--appendfsync', 'always', '--save', ''], redis.port, dir))!;
    redises.push(again);
    const store = inspect(again.url, name);
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
    const redis = (await spawnRedis())!;
    redises.push(redis);
    const serve = await serveOn(redis.url);
    await serve.waitForLog((l) => l.msg === 'the queue store is reachable');
    // A store without persistence is worth a warning at start-up.
    await serve.waitForLog((l) => String(l.msg).includes('keeps nothing on disk'));
    await redis.stop();
    const before = peer.requestsTo('/fine').length;
    const response = await fetch(`${serve.url}/two`, { method: 'POST' });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(((await response.json()) as { detail: string }).detail).toMatch(/could not be queued/);
    const health = await fetch(`${serve.url}/_health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', queue: 'unreachable' });
    expect(peer.requestsTo('/fine').length).toBe(before);
    const metrics = await (await fetch(`${serve.url}/_metrics`)).text();
    expect(metrics).toMatch(/endpoint_service_queue_enqueued_total\{endpoint="two",outcome="refused"\} 1/);
    expect(metrics).toMatch(/endpoint_service_queue_up 0/);
  });

  it('runs the tasks in-process with --queue-fallback in-process while the store is down', async () => {
    const redis = (await spawnRedis())!;
    redises.push(redis);
    const serve = await serveOn(redis.url, '--queue-fallback', 'in-process');
    await serve.waitForLog((l) => l.msg === 'the queue store is reachable');
    await redis.stop();
    const before = peer.requestsTo('/fine').length;
    const response = await fetch(`${serve.url}/two`, { method: 'POST' });
    expect(response.status).toBe(200);
    await peer.waitForRequests(before + 1, '/fine');
    await serve.waitForLog((l) => l.msg === 'the queue cannot take the run; running its tasks in this process');
    const metrics = await (await fetch(`${serve.url}/_metrics`)).text();
    expect(metrics).toMatch(/endpoint_service_queue_enqueued_total\{endpoint="two",outcome="in-process"\} 1/);
  });
});
