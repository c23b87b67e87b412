// SIGTERM to a worker in the middle of a job: it stops taking jobs, gives the running one
// --shutdown-timeout, then checkpoints it and hands it back to the queue at once (no attempt
// counted, no wait for the lock to expire); another worker finishes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import { eventually, inspect, QUEUE_KEY, queueBackends, queueFixture, runsOn, startWorker, stopSpawnedRedis, uniqueQueueName, type RunningWorker, type StoreInspector } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);
const name = uniqueQueueName('drain');

describe.each(backends)('a worker drained by SIGTERM on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  let peer: HttpPeer;
  let smtp: SmtpPeer;
  let serve: RunningService;
  const workers: RunningWorker[] = [];
  let store: StoreInspector;
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  // A lock far longer than the test: only the hand-back can get the job to the second worker.
  const worker = () => {
    const w = startWorker(queueFixture('durable'), url, name, ['--smtp-url', smtp.url, '--shutdown-timeout', '500ms', '--queue-lock-duration', '10m'], { PEER: peer.origin });
    workers.push(w);
    return w;
  };

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/first', { status: 201, json: { id: 'C-2' } });
    peer.route('/slow', { status: 200, hold: () => held }, { status: 200, body: 'ok' });
    smtp = await SmtpPeer.start();
    store = inspect(backend, name);
    serve = await startServe(queueFixture('durable'), ['--queue', url, '--queue-name', name, '--no-queue-consume', '--smtp-url', smtp.url], { PEER: peer.origin, ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY });
  });
  afterAll(async () => {
    release();
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await serve?.stop();
    await peer?.close();
    await smtp?.close();
    await store?.close();
  });

  it('hands the running job back, and another worker finishes it without an attempt counted', async () => {
    const response = await fetch(`${serve.url}/chain`, { method: 'POST', body: new URLSearchParams({ email: 'b@example.test' }) });
    expect(response.status).toBe(200);
    const [job] = await store.queue.getJobs(['waiting']);
    const jobId = job!.id!;

    const first = worker();
    await peer.waitForRequests(1, '/slow');
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    expect(first.logs().find((l) => l.msg === 'job handed back to the queue: the worker is shutting down')).toMatchObject({ jobId, attempt: 1 });
    const handedBack = await store.queue.getJob(jobId);
    expect(['delayed', 'waiting']).toContain(await handedBack!.getState());
    expect(handedBack!.attemptsMade).toBe(0);
    expect((handedBack!.progress as { tasks: Record<string, { outcome: string }> }).tasks.first!.outcome).toBe('succeeded');

    worker();
    await eventually(async () => ((await store.queue.getJobState(jobId)) === 'completed' ? true : undefined), 'the job to complete on the second worker');
    const done = await store.queue.getJob(jobId);
    // One attempt: the one that completed.
    expect(done!.attemptsMade).toBe(1);
    expect(peer.requestsTo('/first').length).toBe(1);
    expect(new Set(peer.requestsTo('/slow').map((r) => r.headers['idempotency-key'])).size).toBe(1);
    expect(smtp.messages.length).toBe(1);
  });
});
