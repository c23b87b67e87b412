// --queue-retention: a failed job is kept that long. The store drops an old failed job only when
// another job fails, so a consumer removes them itself, when it starts and about hourly: a worker
// started with a retention of 1s removes a job that failed more than a second ago.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import { eventually, inspect, QUEUE_KEY, queueBackends, queueFixture, runsOn, startWorker, stopSpawnedRedis, uniqueQueueName, type RunningWorker, type StoreInspector } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);
const name = uniqueQueueName('retention');

describe.each(backends)('failed jobs older than --queue-retention on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  let peer: HttpPeer;
  let serve: RunningService;
  const workers: RunningWorker[] = [];
  let store: StoreInspector;
  const worker = (...args: string[]) => {
    const w = startWorker(queueFixture('durable'), url, name, ['--smtp-url', 'smtp://127.0.0.1:1', ...args], { PEER: peer.origin });
    workers.push(w);
    return w;
  };

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/fine', { status: 200 });
    peer.route('/picky', { status: 400 });
    store = inspect(backend, name);
    serve = await startServe(queueFixture('durable'), ['--queue', url, '--queue-name', name, '--no-queue-consume', '--queue-retention', '1s', '--smtp-url', 'smtp://127.0.0.1:1'], { PEER: peer.origin, ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY });
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await serve?.stop();
    await peer?.close();
    await store?.close();
  });

  it('are removed by a consumer, not only when another job fails', async () => {
    const first = worker();
    const response = await fetch(`${serve.url}/two`, { method: 'POST' });
    expect(response.status).toBe(200);
    const failed = await eventually(async () => (await store.queue.getJobs(['failed']))[0], 'the job to fail');
    await first.stop();
    // Older than the retention, and still there: nothing else has failed since.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await store.queue.getJobState(failed.id!)).toBe('failed');

    const second = worker('--queue-retention', '1s');
    expect(await second.waitForLog((l) => l.msg === 'removed failed jobs older than --queue-retention')).toMatchObject({ count: 1, retention: '1s' });
    expect(await store.queue.getJob(failed.id!)).toBeUndefined();
    expect(await store.queue.getJobCounts('failed')).toEqual({ failed: 0 });
  });
});
