// A request body relayed with <forward-request-body/> from a background run on the durable
// queue: stored sealed in the job (never in clear), and sent byte for byte by the worker that
// resumes the job after the first one was killed in the middle of it.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableRig } from '../helpers/durable-rig.js';
import { eventually, queueBackends, runsOn, stopSpawnedRedis, uniqueQueueName } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);
const name = uniqueQueueName('forward-body');
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** Pretty-printed, non-ASCII, a trailing newline, and beyond 64 KiB so serve spooled it to a file before it was queued. */
const BODY =
  JSON.stringify(
    { action: 'opened', marker: 'raw-body-marker-7f3a', text: 'Grüße 日本 🎉', pad: Array.from({ length: 4000 }, (_, i) => `line ${i}`) },
    null,
    2,
  ) + '\n';
const TYPE = 'application/json; charset=utf-8';

describe.each(backends)('a forwarded body through a worker crash on %s', (backend) => {
  if (!runsOn(backend)) return;
  const rig = new DurableRig(backend, name);
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));

  beforeAll(() =>
    rig.start((peer) => {
      peer.route('/note', { status: 200, body: 'ok' });
      // The first relay never gets its answer while its worker lives; the retry is answered.
      peer.route('/relay', { status: 200, hold: () => held }, { status: 200, body: 'ok' });
    }),
  );
  afterAll(async () => {
    release();
    await rig.close();
  });

  it('is sealed in the job and arrives byte for byte from the worker that resumes it', async () => {
    expect(Buffer.byteLength(BODY)).toBeGreaterThan(64 * 1024);
    const response = await fetch(`${rig.serve.url}/relay`, { method: 'POST', headers: { 'content-type': TYPE, 'x-github-event': 'issues' }, body: BODY });
    expect(response.status).toBe(200);
    const [job] = await rig.store.queue.getJobs(['waiting']);
    const jobId = job!.id!;
    // Sealed: neither the text nor its base64 is readable in the stored job.
    const stored = JSON.stringify(job!.data);
    expect(stored).not.toContain('raw-body-marker');
    expect(stored).not.toContain(Buffer.from(BODY).toString('base64').slice(0, 40));

    const first = rig.worker(['--queue-lock-duration', '1s']);
    await rig.peer.waitForRequests(1, '/relay');
    expect(sha256(rig.peer.requestsTo('/relay')[0]!.bytes)).toBe(sha256(BODY));
    // The outcome of "note" is in the checkpoint before the worker dies.
    await eventually(
      async () =>
        ((await rig.store.queue.getJob(jobId))?.progress as { tasks?: Record<string, { outcome: string }> })?.tasks?.note?.outcome === 'succeeded' || undefined,
      'the checkpoint of "note"',
    );
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    rig.worker(['--queue-lock-duration', '1s']);
    await eventually(
      async () => ((await rig.store.queue.getJobState(jobId)) === 'completed' ? true : undefined),
      'the job to complete on the second worker',
      40_000,
    );
    const relayed = rig.peer.requestsTo('/relay');
    expect(relayed).toHaveLength(2);
    expect(sha256(relayed[1]!.bytes)).toBe(sha256(BODY));
    expect(relayed[1]!.headers['content-type']).toBe(TYPE);
    expect(relayed[1]!.headers['x-github-event']).toBe('issues');
    // The task before it was checkpointed: not run again.
    expect(rig.peer.requestsTo('/note')).toHaveLength(1);
  });
});
