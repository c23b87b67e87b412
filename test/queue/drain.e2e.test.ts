// SIGTERM to a worker in the middle of a job: it stops taking jobs, gives the running one
// --shutdown-timeout, then checkpoints it and hands it back to the queue at once (no attempt
// counted, no wait for the lock to expire); another worker finishes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableRig } from '../helpers/durable-rig.js';
import { eventually, queueBackends, runsOn, stopSpawnedRedis, uniqueQueueName } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);
const name = uniqueQueueName('drain');

describe.each(backends)('a worker drained by SIGTERM on %s', (backend) => {
  if (!runsOn(backend)) return;
  const rig = new DurableRig(backend, name);
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  // A lock far longer than the test: only the hand-back can get the job to the second worker.
  const worker = () => rig.worker(['--shutdown-timeout', '500ms', '--queue-lock-duration', '10m']);

  beforeAll(() =>
    rig.start((peer) => {
      peer.route('/first', { status: 201, json: { id: 'C-2' } });
      peer.route('/slow', { status: 200, hold: () => held }, { status: 200, body: 'ok' });
    }),
  );
  afterAll(async () => {
    release();
    await rig.close();
  });

  it('hands the running job back, and another worker finishes it without an attempt counted', async () => {
    const response = await fetch(`${rig.serve.url}/chain`, { method: 'POST', body: new URLSearchParams({ email: 'b@example.test' }) });
    expect(response.status).toBe(200);
    const [job] = await rig.store.queue.getJobs(['waiting']);
    const jobId = job!.id!;

    const first = worker();
    await rig.peer.waitForRequests(1, '/slow');
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    expect(first.logs().find((l) => l.msg === 'job handed back to the queue: the worker is shutting down')).toMatchObject({ jobId, attempt: 1 });
    const handedBack = await rig.store.queue.getJob(jobId);
    expect(['delayed', 'waiting']).toContain(await handedBack!.getState());
    expect(handedBack!.attemptsMade).toBe(0);
    expect((handedBack!.progress as { tasks: Record<string, { outcome: string }> }).tasks.first!.outcome).toBe('succeeded');

    worker();
    await eventually(async () => ((await rig.store.queue.getJobState(jobId)) === 'completed' ? true : undefined), 'the job to complete on the second worker');
    const done = await rig.store.queue.getJob(jobId);
    // One attempt: the one that completed.
    expect(done!.attemptsMade).toBe(1);
    expect(rig.peer.requestsTo('/first').length).toBe(1);
    expect(new Set(rig.peer.requestsTo('/slow').map((r) => r.headers['idempotency-key'])).size).toBe(1);
    expect(rig.smtp.messages.length).toBe(1);
  });
});
