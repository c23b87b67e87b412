// A job enqueued under one configuration and run by a worker with another: `current` runs it with
// the current one, `strict` fails it (config-changed), and an endpoint whose tasks have no
// explicit ids is always strict (its default ids move when a task is inserted).
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import { eventually, inspect, QUEUE_KEY, queueBackends, runsOn, startWorker, stopSpawnedRedis, uniqueQueueName, type RunningWorker, type StoreInspector } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);
const name = uniqueQueueName('config');

const before = `<endpoint-folder>
  <endpoint name="named" tasks="background">
    <task class="HttpRequest" id="one"><url>\${env:PEER}/one</url><method name="POST"/></task>
  </endpoint>
  <endpoint name="unnamed" tasks="background">
    <task class="HttpRequest"><url>\${env:PEER}/one</url><method name="POST"/></task>
  </endpoint>
</endpoint-folder>`;
const after = `<endpoint-folder>
  <endpoint name="named" tasks="background">
    <task class="HttpRequest" id="one"><url>\${env:PEER}/one</url><method name="POST"/></task>
    <task class="HttpRequest" id="two"><url>\${env:PEER}/two</url><method name="POST"/></task>
  </endpoint>
  <endpoint name="unnamed" tasks="background">
    <task class="HttpRequest"><url>\${env:PEER}/two</url><method name="POST"/></task>
    <task class="HttpRequest"><url>\${env:PEER}/one</url><method name="POST"/></task>
  </endpoint>
</endpoint-folder>`;

describe.each(backends)('a configuration changed between enqueue and run on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  let peer: HttpPeer;
  let serve: RunningService;
  const workers: RunningWorker[] = [];
  let store: StoreInspector;
  const dir = mkdtempSync(path.join(tmpdir(), 'es-config-'));
  const file = (version: string, text: string) => {
    mkdirSync(path.join(dir, version), { recursive: true });
    const f = path.join(dir, version, 'endpoints.xml');
    writeFileSync(f, text);
    return f;
  };
  const oldFile = file('old', before);
  const newFile = file('new', after);

  /** Enqueues a request to `endpoint` and runs it on a worker with the new file and `args`; the job's end state. */
  const runChanged = async (endpoint: string, args: string[]) => {
    const response = await fetch(`${serve.url}/${endpoint}`, { method: 'POST' });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const job = (await store.queue.getJobs(['waiting'])).find((j) => j.data.requestId === requestId)!;
    const worker = startWorker(newFile, url, name, args, { PEER: peer.origin });
    workers.push(worker);
    const state = await eventually(async () => {
      const s = await store.queue.getJobState(job.id!);
      return s === 'completed' || s === 'failed' ? s : undefined;
    }, 'the job to end');
    await worker.stop();
    return { state, job: (await store.queue.getJob(job.id!))! };
  };

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/one', { status: 200 });
    peer.route('/two', { status: 200 });
    store = inspect(backend, name);
    serve = await startServe(oldFile, ['--queue', url, '--queue-name', name, '--no-queue-consume'], { PEER: peer.origin, ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY });
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await serve?.stop();
    await peer?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('current (the default): runs the job with the current configuration', async () => {
    const { state } = await runChanged('named', []);
    expect(state).toBe('completed');
    expect(peer.requestsTo('/one').length).toBe(1);
    expect(peer.requestsTo('/two').length).toBe(1);
  });

  it('strict: fails the job with config-changed, running nothing', async () => {
    const calls = peer.requests.length;
    const { state, job } = await runChanged('named', ['--on-config-change', 'strict']);
    expect(state).toBe('failed');
    expect(job.failedReason).toMatch(/^config-changed: /);
    expect(peer.requests.length).toBe(calls);
  });

  it('positional task ids: strict even under current', async () => {
    const calls = peer.requests.length;
    const { state, job } = await runChanged('unnamed', ['--on-config-change', 'current']);
    expect(state).toBe('failed');
    expect(job.failedReason).toMatch(/^config-changed: .*explicit ids/);
    expect(peer.requests.length).toBe(calls);
  });
});
