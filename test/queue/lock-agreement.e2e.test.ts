// Every process that runs a queue's jobs has the same --queue-lock-duration (docs/queue.md, "What
// is guaranteed"): a worker whose lock duration differs from that of a live worker of the queue,
// or of one killed less than twice its lock duration ago, refuses to start with one line (exit 2)
// and takes no job; one that agrees resumes the killed worker's job.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableRig } from '../helpers/durable-rig.js';
import { eventually, queueBackends, runsOn, stopSpawnedRedis, uniqueQueueName } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);

describe.each(backends)('the lock duration of the workers of a queue on %s', (backend) => {
  if (!runsOn(backend)) return;
  const rig = new DurableRig(backend, uniqueQueueName('lock'));
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  // Long enough that the killed worker's announcement (twice this) outlives the start of the next worker.
  const LOCK = '10s';

  beforeAll(() =>
    rig.start((peer) => {
      peer.route('/first', { status: 201, json: { id: 'C-1' } });
      // The first call never gets its answer while its worker lives; the retry is answered.
      peer.route('/slow', { status: 200, hold: () => held }, { status: 200, body: 'ok' });
    }),
  );
  afterAll(async () => {
    release();
    await rig.close();
  });

  const refused = async (lock: string) => {
    const worker = rig.worker(['--queue-lock-duration', lock]);
    const exit = await worker.exited;
    expect(exit.code).toBe(2);
    // The one line besides the log's (JSON lines, some flushed at the exit).
    const lines = worker
      .stderr()
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('{'));
    expect(lines).toEqual([
      `endpoint-service: error: --queue-lock-duration ${lock} differs from the ${LOCK} of the processes running jobs of the queue "${rig.name}": ` +
        'give every worker (and serve that runs jobs) of a queue the same, or a job of a killed worker may wait longer than twice the lock duration; ' +
        `to change it, stop them all: the announced ${LOCK} is forgotten 20s after the last of them stopped`,
    ]);
  };

  it('refuses a worker that disagrees with a live one, and with one just killed; one that agrees resumes the job', async () => {
    const response = await fetch(`${rig.serve.url}/chain`, { method: 'POST', body: new URLSearchParams({ email: 'a@example.test' }) });
    expect(response.status).toBe(200);
    const [job] = await rig.store.queue.getJobs(['waiting']);
    const jobId = job!.id!;

    const first = rig.worker(['--queue-lock-duration', LOCK]);
    // Holding the job: it has announced its lock duration.
    await rig.peer.waitForRequests(1, '/slow');
    await refused('1s');

    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    await refused('2s');
    expect(rig.peer.requestsTo('/slow').length).toBe(1);

    const second = rig.worker(['--queue-lock-duration', LOCK]);
    await eventually(
      async () => ((await rig.store.queue.getJobState(jobId)) === 'completed' ? true : undefined),
      'the job to complete on the second worker',
      60_000,
    );
    await second.waitForLog((l) => l.jobId === jobId && l.msg === 'job resumed after a stall');
    expect(rig.peer.requestsTo('/slow').length).toBe(2);
  }, 90_000);
});
