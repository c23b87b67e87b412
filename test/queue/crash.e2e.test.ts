// A worker killed in the middle of a task: after its lock expires another worker resumes the
// job from its checkpoint. Each effect reaches its peer once (counted by Idempotency-Key and
// Message-ID), the checkpointed task is not run again, and no mail goes out twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import { DurableRig } from '../helpers/durable-rig.js';
import {
  eventually,
  inspect,
  QUEUE_KEY,
  queueBackends,
  queueFixture,
  runCli,
  runsOn,
  startWorker,
  stopSpawnedRedis,
  uniqueQueueName,
  type RunningWorker,
  type StoreInspector,
} from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);
const name = uniqueQueueName('crash');

describe.each(backends)('a worker killed mid-task on %s', (backend) => {
  if (!runsOn(backend)) return;
  const rig = new DurableRig(backend, name);
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const worker = () => rig.worker(['--queue-lock-duration', '1s']);

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

  it('resumes from the checkpoint on another worker, every effect once', async () => {
    const response = await fetch(`${rig.serve.url}/chain`, { method: 'POST', body: new URLSearchParams({ email: 'a@example.test' }) });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const [job] = await rig.store.queue.getJobs(['waiting']);
    const jobId = job!.id!;

    const first = worker();
    await rig.peer.waitForRequests(1, '/slow');
    // The first task's outcome is in the checkpoint before the worker dies.
    await eventually(
      async () =>
        ((await rig.store.queue.getJob(jobId))?.progress as { tasks?: Record<string, { outcome: string }> })?.tasks?.first?.outcome === 'succeeded' ||
        undefined,
      'the checkpoint of "first"',
    );
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = worker();
    await eventually(
      async () => ((await rig.store.queue.getJobState(jobId)) === 'completed' ? true : undefined),
      'the job to complete on the second worker',
      40_000,
    );
    const resumed = await second.waitForLog((l) => l.jobId === jobId && typeof l.finishedTasks === 'number');
    expect(resumed).toMatchObject({ msg: 'job resumed after a stall', requestId, finishedTasks: 1 });

    // "first" was checkpointed: not run again.
    expect(rig.peer.requestsTo('/first').length).toBe(1);
    // "second" was cut off: sent again with the same key, and answered once.
    const slow = rig.peer.requestsTo('/slow');
    expect(slow.length).toBe(2);
    expect(new Set(slow.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    expect(slow.filter((r) => r.endedAt !== null).length).toBe(1);
    // It ran with the intermediate value from the checkpoint.
    expect(slow[1]!.body).toBe('customer=C-1');
    // One mail.
    expect(rig.smtp.messages.length).toBe(1);
    expect(new Set(rig.smtp.messages.map((m) => m.parsed.messageId)).size).toBe(1);

    // The interruption is in the job's history, once, and every task's outcome in its record.
    const shown = await runCli(['jobs', 'show', requestId, '--queue', backend.url, '--queue-name', name]);
    expect(shown.code).toBe(0);
    expect(shown.stdout.match(/interrupted: its worker stopped/g)).toHaveLength(1);
    expect(shown.stdout).toMatch(
      /log: \S+ attempt 1: interrupted: its worker stopped without handing the job back \(killed, crashed or cut off from the store\); resumed by another worker once its lock expired\n/,
    );
    expect(shown.stdout).toContain('  task second: succeeded\n');
    expect(shown.stdout).toContain('  task notify: succeeded\n');
  });
});

describe.each(backends)('a job that kills every worker that runs it on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  const loopName = uniqueQueueName('stall');
  let peer: HttpPeer;
  let serve: RunningService;
  const workers: RunningWorker[] = [];
  let store: StoreInspector;

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/flaky', { never: true });
    store = inspect(backend, loopName);
    serve = await startServe(queueFixture('durable'), ['--queue', url, '--queue-name', loopName, '--no-queue-consume', '--smtp-url', 'smtp://127.0.0.1:1'], {
      PEER: peer.origin,
      ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY,
    });
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await serve?.stop();
    await peer?.close();
    await store?.close();
  });

  it('ends in the failed set after 2 stalls instead of looping', async () => {
    const response = await fetch(`${serve.url}/flaky`, { method: 'POST' });
    expect(response.status).toBe(200);
    const [job] = await store.queue.getJobs(['waiting']);
    const start = () => {
      const w = startWorker(queueFixture('durable'), url, loopName, ['--smtp-url', 'smtp://127.0.0.1:1', '--queue-lock-duration', '1s'], { PEER: peer.origin });
      workers.push(w);
      return w;
    };
    for (let kill = 1; kill <= 3; kill++) {
      const w = start();
      await peer.waitForRequests(kill, '/flaky');
      w.child.kill('SIGKILL');
      await w.exited;
    }
    // A living worker's stall check finds the third stall and fails the job.
    const living = start();
    const state = await eventually(
      async () => {
        const s = await store.queue.getJobState(job!.id!);
        return s === 'failed' ? s : undefined;
      },
      'the job to fail',
      40_000,
    );
    expect(state).toBe('failed');
    expect((await store.queue.getJob(job!.id!))!.failedReason).toMatch(/stalled more than allowable limit/);
    expect(peer.requestsTo('/flaky').length).toBe(3);
    // Said in the log, as every other failure for good is.
    const line = await living.waitForLog((l) => l.level === 'error' && l.jobId === job!.id);
    expect(line.msg).toBe('job failed for good: it stalled too often (its worker keeps dying)');
    // And in the job's history: the interruptions it survived, then why it failed.
    const history = await eventually(async () => {
      const { logs } = await store.queue.getJobLogs(job!.id!);
      return logs.some((l) => l.includes('failed for good')) ? logs : undefined;
    }, 'the failure in the job history');
    // Each resumption says so once; none counts an earlier stall again.
    const interruptions = history.filter((l) => l.includes('interrupted: its worker stopped'));
    expect(interruptions.length).toBeGreaterThanOrEqual(1);
    for (const l of interruptions) expect(l).not.toMatch(/times;/);
    expect(history.at(-1)).toMatch(/failed for good: it stalled 3 times, more than the 2 allowed \(its worker keeps dying\)$/);
  });
});

describe.each(backends)('a worker held up past its lock while another takes the job over on %s', (backend) => {
  if (!runsOn(backend)) return;
  const rig = new DurableRig(backend, uniqueQueueName('takeover'));
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const worker = () => rig.worker(['--queue-lock-duration', '1s']);

  beforeAll(() =>
    rig.start((peer) => {
      peer.route('/first', { status: 201, json: { id: 'C-9' } });
      // The first worker's call is held until the test lets it go; the second worker's is answered.
      peer.route('/slow', { status: 200, hold: () => held }, { status: 200, body: 'ok' });
    }),
  );
  afterAll(async () => {
    release();
    await rig.close();
  });

  it('writes nothing over the record of the worker that took the job over, and sends nothing', async () => {
    const response = await fetch(`${rig.serve.url}/chain`, { method: 'POST', body: new URLSearchParams({ email: 't@example.test' }) });
    const requestId = response.headers.get('x-request-id')!;
    const [job] = await rig.store.queue.getJobs(['waiting']);
    const jobId = job!.id!;

    const first = worker();
    await rig.peer.waitForRequests(1, '/slow');
    // Held up (as by a long pause of its event loop): its lock expires and another worker takes the job.
    first.child.kill('SIGSTOP');
    const second = worker();
    await eventually(
      async () => ((await rig.store.queue.getJobState(jobId)) === 'completed' ? true : undefined),
      'the job to complete on the second worker',
      40_000,
    );
    expect(rig.smtp.messages.length).toBe(1);
    first.child.kill('SIGCONT');
    release();
    // The first worker's call ends; its checkpoint and its mail find the job gone to another worker.
    await first.waitForLog(
      (l) =>
        l.jobId === jobId &&
        ['job taken over by another worker: this one stops and records nothing more', 'job retry scheduled', 'job failed for good'].includes(String(l.msg)),
    );
    expect(rig.smtp.messages.length).toBe(1);

    const shown = await runCli(['jobs', 'show', requestId, '--queue', backend.url, '--queue-name', rig.name]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^[0-9a-f-]+ {2}chain {2}completed /);
    expect(shown.stdout).toContain('  task second: succeeded\n');
    expect(shown.stdout).toContain('  task notify: succeeded\n');
    expect(shown.stdout).toMatch(/ {2}mail notify, message 1: sent, Message-ID <[^>]+>\n/);
    expect(shown.stdout).toContain('stopped: another worker had taken the job over');
    await second.stop();
  });
});

describe.each(backends)('a worker held up past its lock in the last task of a run on %s', (backend) => {
  if (!runsOn(backend)) return;
  const rig = new DurableRig(backend, uniqueQueueName('takeover-last'));
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const worker = () => rig.worker(['--queue-lock-duration', '1s']);

  beforeAll(() =>
    rig.start((peer) => {
      // The first worker's call is held until the test lets it go; the second worker's is answered.
      peer.route('/flaky', { status: 200, hold: () => held }, { status: 200, body: 'ok' });
    }),
  );
  afterAll(async () => {
    release();
    await rig.close();
  });

  it('reports the run taken over, never completed: BullMQ refuses its completion', async () => {
    const response = await fetch(`${rig.serve.url}/flaky`, { method: 'POST' });
    const requestId = response.headers.get('x-request-id')!;
    const [job] = await rig.store.queue.getJobs(['waiting']);
    const jobId = job!.id!;

    const first = worker();
    await rig.peer.waitForRequests(1, '/flaky');
    first.child.kill('SIGSTOP');
    const second = worker();
    await second.waitForLog((l) => l.msg === 'job completed' && l.jobId === jobId, 40_000);
    first.child.kill('SIGCONT');
    release();
    // Its only task succeeds after all, and nothing finds the lock lost before the completion.
    await first.waitForLog((l) => l.jobId === jobId && l.msg === 'job taken over by another worker: this one stops and records nothing more');
    expect(
      first
        .logs()
        .filter((l) => l.jobId === jobId)
        .map((l) => l.msg),
    ).not.toContain('job completed');
    const metrics = await (await fetch(`${await first.origin}/_metrics`)).text();
    expect(metrics).not.toMatch(/endpoint_service_queue_runs_total\{endpoint="flaky",outcome="completed"\} [1-9]/);
    expect(metrics).toMatch(/endpoint_service_queue_runs_total\{endpoint="flaky",outcome="interrupted"\} 1/);

    const shown = await runCli(['jobs', 'show', requestId, '--queue', backend.url, '--queue-name', rig.name]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^[0-9a-f-]+ {2}flaky {2}completed /);
    expect(shown.stdout).toContain('  task call: succeeded\n');
    await second.stop();
  });
});
