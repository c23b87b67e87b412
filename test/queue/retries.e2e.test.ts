// Across attempts: a transient failure is retried by the queue until it succeeds; a permanent
// one goes straight to the failed set, where `jobs` lists it, and `jobs retry` runs only the task
// that did not succeed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import { closedPort } from '../helpers/smtp-peer.js';
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
const name = uniqueQueueName('retries');

describe.each(backends)('retries across attempts and the failed set on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  let peer: HttpPeer;
  let serve: RunningService;
  let worker: RunningWorker;
  let store: StoreInspector;
  const jobs = (...args: string[]) => runCli(['jobs', ...args, '--queue', url, '--queue-name', name]);
  let pickyFixed = false;

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/flaky', { status: 503 }, { status: 503 }, { status: 503 }, { status: 200 });
    peer.route('/fine', { status: 200 });
    peer.route('/picky', () => (pickyFixed ? { status: 200 } : { status: 400, body: 'no' }));
    store = inspect(backend, name);
    const args = ['--queue', url, '--queue-name', name, '--no-queue-consume', '--queue-backoff', '10ms', '--smtp-url', 'smtp://127.0.0.1:1'];
    serve = await startServe(queueFixture('durable'), args, { PEER: peer.origin, ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY });
    worker = startWorker(queueFixture('durable'), url, name, ['--smtp-url', 'smtp://127.0.0.1:1'], { PEER: peer.origin });
  });
  afterAll(async () => {
    await worker?.stop();
    await serve?.stop();
    await peer?.close();
    await store?.close();
  });

  it('retries a 503 until the 200, with the same Idempotency-Key each time', async () => {
    const response = await fetch(`${serve.url}/flaky`, { method: 'POST' });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const [job] = await store.queue.getJobs(['waiting', 'active', 'delayed']);
    const jobId = job!.id!;
    await eventually(async () => ((await store.queue.getJobState(jobId)) === 'completed' ? true : undefined), 'the flaky job to complete');
    const calls = peer.requestsTo('/flaky');
    expect(calls.length).toBe(4);
    expect(new Set(calls.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    expect((await store.queue.getJob(jobId))!.attemptsMade).toBe(4);
    // Logs are written in order: once the completion is logged, so are the retries.
    await worker.waitForLog((l) => l.msg === 'job completed' && l.requestId === requestId);
    expect(
      worker
        .logs()
        .filter((l) => l.msg === 'job retry scheduled' && l.requestId === requestId)
        .map((l) => l.attempt),
    ).toEqual([1, 2, 3]);

    // Completed on its fourth attempt: no error on the job; the failed attempts are its history.
    const json = await jobs('show', requestId, '--format', 'json');
    const [shown] = (
      JSON.parse(json.stdout) as {
        jobs: { state: string; error: string | null; failedTask: string | null; code: string | null; tasks: Record<string, { outcome: string }> }[];
      }
    ).jobs;
    expect(shown).toMatchObject({ state: 'completed', error: null, failedTask: null, code: null });
    expect(shown!.tasks.call!.outcome).toBe('succeeded');
    const text = (await jobs('show', requestId)).stdout;
    expect(text.split('\n')[0]).toMatch(new RegExp(`^${requestId}  flaky  completed  attempts 4  enqueued \\S+$`));
    expect(text).toContain('  task call: succeeded\n');
    expect(text).toContain('attempt 3: retry scheduled: task "call" failed (http-status)');
  });

  it('puts a 400 straight into the failed set, listed by jobs list', async () => {
    const response = await fetch(`${serve.url}/two`, { method: 'POST' });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    await eventually(async () => ((await store.queue.getJobs(['failed'])).length === 1 ? true : undefined), 'the job to fail');
    expect(peer.requestsTo('/picky').length).toBe(1);
    expect(peer.requestsTo('/fine').length).toBe(1);

    const listed = await jobs('list', '--state', 'failed', '--format', 'json');
    expect(listed.code).toBe(0);
    const document = JSON.parse(listed.stdout) as {
      jobs: { requestId: string; endpoint: string; failedTask: string; attempts: number; code: string; error: string }[];
    };
    expect(document.jobs).toHaveLength(1);
    expect(document.jobs[0]).toMatchObject({ requestId, endpoint: 'two', failedTask: 'picky', attempts: 1 });
    // The code in clear; the text (with the request's path) only for jobs show --reveal (error-texts.e2e.test.ts).
    expect(document.jobs[0]).toMatchObject({ code: 'http-status', error: 'task "picky" failed (http-status)' });

    const shown = await jobs('show', requestId, '--format', 'json');
    expect(shown.code).toBe(0);
    const detail = (JSON.parse(shown.stdout) as { jobs: { tasks: Record<string, { outcome: string }> }[] }).jobs[0]!;
    expect(detail.tasks.fine!.outcome).toBe('succeeded');
    expect(detail.tasks.picky!.outcome).toBe('failed');
  });

  it('jobs retry runs only the task that failed, once the peer is fixed', async () => {
    const [failed] = await store.queue.getJobs(['failed']);
    pickyFixed = true;
    const retried = await jobs('retry', failed!.data.requestId);
    expect(retried.code).toBe(0);
    await eventually(async () => ((await store.queue.getJobState(failed!.id!)) === 'completed' ? true : undefined), 'the retried job to complete');
    expect(peer.requestsTo('/picky').length).toBe(2);
    expect(peer.requestsTo('/fine').length).toBe(1);
    expect(new Set(peer.requestsTo('/picky').map((r) => r.headers['idempotency-key'])).size).toBe(1);
    // The attempt before the retry and the one after: two, as its history has them.
    const shown = (await jobs('show', failed!.data.requestId)).stdout;
    expect(shown.split('\n')[0]).toMatch(/ {2}completed {2}attempts 2 {2}/);
  });

  it('answers jobs show, retry and discard for an unknown request with exit 3 (nothing to act on), a store it cannot reach with 4, and a usage error with 2 (README, exit codes)', async () => {
    for (const command of ['show', 'retry', 'discard']) {
      const unknown = await jobs(command, 'no-such-request');
      expect(unknown.code, command).toBe(3);
      expect(unknown.stderr.trimEnd().split('\n'), command).toEqual(['endpoint-service: no job for "no-such-request" in this queue']);
    }
    const unreachable = await runCli(['jobs', 'list', '--queue', `redis://127.0.0.1:${await closedPort()}`]);
    expect(unreachable.code).toBe(4);
    expect(unreachable.stderr).toMatch(/^endpoint-service: the queue store cannot be reached: .*ECONNREFUSED/);
    expect((await runCli(['jobs', 'list', '--queue', 'ftp://x'])).code).toBe(2);
    expect((await runCli(['jobs', 'list', '--queue', url, '--state', 'lost'])).code).toBe(2);
  });
});
