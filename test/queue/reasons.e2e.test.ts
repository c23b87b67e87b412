// How a failed job's reason counts, through the binary: a task tries several times within one
// attempt of the job (its `retries`), and the queue makes several attempts of the job
// (--queue-attempts). Both counts are said, in words that tell them apart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import { eventually, inspect, QUEUE_KEY, queueBackends, queueFixture, runCli, runsOn, startWorker, stopSpawnedRedis, uniqueQueueName, type RunningWorker, type StoreInspector } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);
const FIXTURE = queueFixture('task-retries');

describe.each(backends)('the reason of a job that failed for good on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  const name = uniqueQueueName('reasons');
  let peer: HttpPeer;
  let serve: RunningService;
  let worker: RunningWorker;
  let store: StoreInspector;

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/down', { status: 503 });
    store = inspect(backend, name);
    serve = await startServe(FIXTURE, ['--queue', url, '--queue-name', name, '--no-queue-consume', '--queue-attempts', '2', '--queue-backoff', '10ms'], { PEER: peer.origin, ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY });
    worker = startWorker(FIXTURE, url, name, [], { PEER: peer.origin });
  });
  afterAll(async () => {
    await worker?.stop();
    await serve?.stop();
    await peer?.close();
    await store?.close();
  });

  it('counts the attempts of the job and the tries of the task in different words', async () => {
    const response = await fetch(`${serve.url}/down`, { method: 'POST' });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const failed = await worker.waitForLog((l) => l.msg === 'job failed for good' && l.requestId === requestId);
    // 2 attempts of the job, 3 tries of the task in each.
    expect(peer.requestsTo('/down').length).toBe(6);
    const shown = await runCli(['jobs', 'show', requestId, '--queue', url, '--queue-name', name]);
    expect(shown.code).toBe(0);
    for (const text of [String(failed.reason), shown.stdout]) {
      expect(new Set([...text.matchAll(/(\d+) attempts/g)].map((m) => m[1])), text).toEqual(new Set(['2']));
      expect(text).toMatch(/tried 3 times/);
    }
    await eventually(async () => ((await store.queue.getJobs(['failed'])).length === 1 ? true : undefined), 'the failed job');
  });
});
