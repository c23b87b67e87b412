// serve --queue answers a background request once its job is stored; a separate worker process
// runs the tasks; what is stored is sealed. Each suite runs on every store of queueBackends().
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import {
  eventually,
  inspect,
  QUEUE_KEY,
  queueBackends,
  queueFixture,
  runsOn,
  startWorker,
  stopSpawnedRedis,
  uniqueQueueName,
  type RunningWorker,
  type StoreInspector,
} from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);
const name = uniqueQueueName('basic');
const SECRET = 'crm-secret-5f1c9a';
const INTERMEDIATE = 'C-intermediate-88213';
const EMAIL = 'private.person@example.test';
const MESSAGE = 'a private message 7731';

describe.each(backends)('serve --queue with a separate worker on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  let peer: HttpPeer;
  let smtp: SmtpPeer;
  let serve: RunningService;
  let worker: RunningWorker | null = null;
  let store: StoreInspector;
  const env = () => ({ PEER: peer.origin, CRM_KEY: SECRET });

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/crm', { status: 201, json: { id: INTERMEDIATE } });
    peer.route('/note', { status: 200, body: 'ok' });
    peer.route('/ping', { status: 200, body: 'ok' });
    smtp = await SmtpPeer.start();
    store = inspect(backend, name);
    serve = await startServe(queueFixture('basic'), ['--queue', url, '--queue-name', name, '--no-queue-consume', '--smtp-url', smtp.url], {
      ...env(),
      ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY,
    });
  });
  afterAll(async () => {
    await worker?.stop();
    await serve?.stop();
    await peer?.close();
    await smtp?.close();
    await store?.close();
  });

  let requestId = '';
  let jobId = '';

  it('answers once the job is stored, before any task has run', async () => {
    const response = await fetch(`${serve.url}/contact`, { method: 'POST', body: new URLSearchParams({ email: EMAIL, message: MESSAGE }) });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('thanks');
    requestId = response.headers.get('x-request-id')!;
    // No process consumes the queue yet: nothing can have reached the peers, and the job waits.
    expect(peer.requests.length).toBe(0);
    const jobs = await store.queue.getJobs(['waiting']);
    expect(jobs.map((j) => j.data.requestId)).toEqual([requestId]);
    jobId = jobs[0]!.id!;
    expect(jobs[0]!.name).toBe('contact');
  });

  it('keeps the parameters, env values and intermediate values out of the store in clear', async () => {
    worker = startWorker(queueFixture('basic'), url, name, ['--smtp-url', smtp.url], env());
    await smtp.waitForMessages(1);
    await eventually(async () => ((await store.queue.getJobState(jobId)) === 'completed' ? true : undefined), 'the job to complete');
    // Read straight from the store: the Redis hash and log list, or the PostgreSQL rows.
    const stored = await store.stored(jobId);
    expect(stored).toContain(requestId); // the job is what was read
    expect(stored).toContain('sealedIntermediate'); // with its checkpoint
    expect(((await store.queue.getJob(jobId))!.progress as { tasks: Record<string, { outcome: string }> }).tasks.create!.outcome).toBe('succeeded');
    for (const secret of [EMAIL, 'private.person', MESSAGE, SECRET, INTERMEDIATE]) expect(stored).not.toContain(secret);
  });

  it('has a separate worker run every task with the values of the request', async () => {
    const crm = peer.requestsTo('/crm');
    expect(crm.length).toBe(1);
    expect(crm[0]!.body).toBe(`email=${encodeURIComponent(EMAIL)}`);
    expect(crm[0]!.headers['x-api-key']).toBe(SECRET);
    const note = peer.requestsTo('/note');
    expect(note.length).toBe(1);
    expect(new URLSearchParams(note[0]!.body).get('contact')).toBe(INTERMEDIATE);
    expect(new URLSearchParams(note[0]!.body).get('message')).toBe(MESSAGE);
    expect(smtp.messages.length).toBe(1);
    expect(smtp.messages[0]!.parsed.messageId).toMatch(/^<[0-9a-f]{40}@example\.test>$/);
    const line = await worker!.waitForLog((l) => l.msg === 'job completed');
    expect(line).toMatchObject({ requestId, endpoint: 'contact', jobId, attempt: 1, tasks: { create: 'succeeded', note: 'succeeded', notify: 'succeeded' } });
    // The job's one info line (docs/behaviour.md): no line of its start, none per task that succeeded.
    expect(
      worker!
        .logs()
        .filter((l) => l.requestId === requestId && l.level === 'info')
        .map((l) => l.msg),
    ).toEqual(['job completed']);
  });

  it('answers a tasks="wait" endpoint in-process, without the queue', async () => {
    const before = (await store.queue.getJobCounts('completed')).completed;
    const response = await fetch(`${serve.url}/waiting`);
    expect(response.status).toBe(200);
    // Ran by serve itself (which consumes nothing), before it answered.
    expect(peer.requestsTo('/ping').length).toBe(1);
    expect((await store.queue.getJobCounts('completed')).completed).toBe(before);
  });

  it('counts enqueues on serve, and runs and waits on the worker, in /_metrics', async () => {
    const served = await (await fetch(`${serve.url}/_metrics`)).text();
    expect(served).toMatch(/endpoint_service_queue_enqueued_total\{endpoint="contact",outcome="queued"\} 1/);
    expect(served).toMatch(/endpoint_service_queue_enqueue_seconds_count\{endpoint="contact"\} 1/);
    expect(served).toMatch(/endpoint_service_queue_up 1/);
    const worked = await (await fetch(`${await worker!.origin}/_metrics`)).text();
    expect(worked).toMatch(/endpoint_service_queue_runs_total\{endpoint="contact",outcome="completed"\} 1/);
    expect(worked).toMatch(/endpoint_service_queue_wait_seconds_count\{endpoint="contact"\} 1/);
    expect(worked).toMatch(/endpoint_service_task_outcomes_total\{endpoint="contact",task="notify",kind="email",outcome="succeeded"\} 1/);
    expect(worked).toMatch(/endpoint_service_queue_jobs\{state="completed"\} 1/);
  });

  it('reports the queue in /_health', async () => {
    expect(await (await fetch(`${serve.url}/_health`)).json()).toEqual({ status: 'ok', queue: 'up' });
    const origin = await worker!.origin;
    expect(await (await fetch(`${origin}/_health`)).json()).toMatchObject({ status: 'ok', queue: 'up' });
  });
});

describe.each(backends)('serve --queue without --no-queue-consume on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  const own = uniqueQueueName('consume');
  let peer: HttpPeer;
  let serve: RunningService;
  let store: StoreInspector;

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/ping', { status: 200 });
    store = inspect(backend, own);
    serve = await startServe(queueFixture('basic'), ['--queue', url, '--queue-name', own, '--smtp-url', 'smtp://127.0.0.1:1'], {
      PEER: peer.origin,
      CRM_KEY: 'k',
      ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY,
    });
  });
  afterAll(async () => {
    await serve?.stop();
    await peer?.close();
    await store?.close();
  });

  it('runs the queued jobs itself', async () => {
    const response = await fetch(`${serve.url}/ping?n=7`);
    expect(response.status).toBe(200);
    await peer.waitForRequests(1, '/ping');
    expect(peer.requestsTo('/ping')[0]!.body).toBe('n=7');
    const line = await serve.waitForLog((l) => l.msg === 'job completed');
    expect(line.requestId).toBe(response.headers.get('x-request-id'));
  });
});

describe.each(backends)('worker --deny-private-addresses on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  const own = uniqueQueueName('deny');
  let peer: HttpPeer;
  let serve: RunningService;
  let worker: RunningWorker;
  let store: StoreInspector;

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/ping', { status: 200 });
    store = inspect(backend, own);
    const env = { PEER: peer.origin, CRM_KEY: 'k' };
    serve = await startServe(queueFixture('basic'), ['--queue', url, '--queue-name', own, '--no-queue-consume', '--smtp-url', 'smtp://127.0.0.1:1'], {
      ...env,
      ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY,
    });
    worker = startWorker(queueFixture('basic'), url, own, ['--smtp-url', 'smtp://127.0.0.1:1', '--deny-private-addresses'], env);
  });
  afterAll(async () => {
    await worker?.stop();
    await serve?.stop();
    await peer?.close();
    await store?.close();
  });

  it('holds for queued tasks as for in-process ones: a loopback peer is not reached', async () => {
    const response = await fetch(`${serve.url}/ping?n=1`);
    expect(response.status).toBe(200);
    const failed = await eventually(async () => (await store.queue.getJobs(['failed']))[0], 'the job to fail');
    expect(failed.failedReason).toMatch(/task "ping" failed/);
    expect(peer.requestsTo('/ping').length).toBe(0);
  });
});
