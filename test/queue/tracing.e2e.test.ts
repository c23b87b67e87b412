// Trace context across the queue, through the built binary and a real OTLP receiver: serve --otel
// stores a background run's trace context with its job; a separate worker --otel runs the job as
// a span of that trace, under serve's server span, with the task spans under it and the trace
// sent on to the task's upstream. A job stored without a context starts a trace of its own; a
// worker without tracing exports nothing, sends no traceparent and loads nothing of
// OpenTelemetry; serve's own consumers trace as a worker does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer, type RecordedRequest } from '../helpers/http-peer.js';
import { ModuleWatch } from '../helpers/loaded-modules.js';
import { OTEL_ENV, OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import {
  eventually,
  inspect,
  QUEUE_KEY,
  queueFixture,
  redisBackend,
  startWorker,
  stopSpawnedRedis,
  testRedisUrl,
  uniqueQueueName,
  type RunningWorker,
} from '../helpers/queue.js';

const url = await testRedisUrl();
const name = uniqueQueueName('tracing');

// OTLP's span kinds and status codes.
const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;
const ERROR = 2;
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const CLIENT_HEADERS = { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, tracestate: 'vendor=opaque-1' };
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;
const FILE = queueFixture('basic');
// The fixture has an Email task, which needs SMTP settings to compile; no mail is sent here.
const SMTP = ['--smtp-url', 'smtp://127.0.0.1:1'];

let peer: HttpPeer;
let receiver: OtlpReceiver;
const watch = ModuleWatch.create(/node_modules\/@opentelemetry\//);

/** Whatever the machine has set, these tests decide whether and where spans go. */
function env(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    PEER: peer.origin,
    CRM_KEY: 'k',
    ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY,
    ...OTEL_ENV,
    ...extra,
  };
}

const traced = (extra: Record<string, string | undefined> = {}) => env({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, ...extra });

/** The request the task `ping` sent upstream for `?n=…`. */
const pingWith = (n: string): Promise<RecordedRequest> =>
  eventually(() => peer.requestsTo('/ping').find((r) => new URLSearchParams(r.body).get('n') === n), `the upstream request of n=${n}`);

const ofRequest = (kind: number, requestId: string) => (s: ReceivedSpan) => s.kind === kind && s.attributes['endpoint_service.request_id'] === requestId;

/** The span of this kind (the server span, the job span) that carries the request id. */
async function spanOf(kind: number, requestId: string): Promise<ReceivedSpan> {
  await receiver.waitFor((all) => all.some(ofRequest(kind, requestId)));
  return receiver.spans.find(ofRequest(kind, requestId))!;
}

async function childrenOf(parent: ReceivedSpan, count: number): Promise<ReceivedSpan[]> {
  const children = (all: readonly ReceivedSpan[]) => all.filter((s) => s.traceId === parent.traceId && s.parentSpanId === parent.spanId);
  await receiver.waitFor((all) => children(all).length >= count);
  return children(receiver.spans);
}

function parseTraceparent(value: string | string[] | undefined): { traceId: string; parentId: string } {
  const match = TRACEPARENT.exec(String(value));
  expect(match, `traceparent ${String(value)}`).not.toBeNull();
  return { traceId: match![1]!, parentId: match![2]! };
}

beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/ping', (request) => (new URLSearchParams(request.body).get('n') === 'fail' ? { status: 400, body: 'no' } : { status: 200, body: 'ok' }));
  receiver = await OtlpReceiver.start();
});
afterAll(async () => {
  await peer?.close();
  await receiver?.close();
  watch.remove();
  await stopSpawnedRedis();
});

describe.skipIf(url === null)('serve --otel --no-queue-consume with a separate worker', () => {
  const queue = ['--queue', url!, '--queue-name', name];
  let serve: RunningService;
  let store: ReturnType<typeof inspect>;
  const workers: RunningWorker[] = [];

  beforeAll(async () => {
    store = inspect(redisBackend(url!), name);
    serve = await startServe(FILE, [...queue, '--no-queue-consume', '--otel', ...SMTP], traced());
  });
  afterAll(async () => {
    for (const worker of workers) await worker.stop();
    await serve?.stop();
    await store?.close();
  });

  const storedJob = async (requestId: string) =>
    eventually(async () => (await store.queue.getJobs(['completed', 'failed'])).find((j) => j.data.requestId === requestId), `the job of ${requestId}`);

  let tracingWorker: RunningWorker;
  const tracingWorkerModules = watch.run();

  it("runs the job as a span of the request's trace, under serve's server span, with the task spans under it and the trace sent upstream", async () => {
    tracingWorker = startWorker(FILE, url!, name, ['--otel', ...SMTP], traced({ OTEL_SERVICE_NAME: 'orders-worker', ...tracingWorkerModules.env }));
    workers.push(tracingWorker);
    const response = await fetch(`${serve.url}/ping?n=1`, { headers: CLIENT_HEADERS });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;

    const upstream = await pingWith('1');
    const sent = parseTraceparent(upstream.headers.traceparent);
    expect(sent.traceId).toBe(CLIENT_TRACE);
    expect(upstream.headers.tracestate).toBe(CLIENT_HEADERS.tracestate);

    const server = await spanOf(SERVER, requestId);
    const job = await spanOf(CONSUMER, requestId);
    expect(server).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN });
    expect(job).toMatchObject({ name: 'job ping', traceId: CLIENT_TRACE, parentSpanId: server.spanId, statusCode: 0 });
    const stored = await storedJob(requestId);
    expect(job.attributes).toEqual({
      'endpoint_service.endpoint': 'ping',
      'endpoint_service.request_id': requestId,
      'endpoint_service.job.id': stored.id,
      'endpoint_service.job.attempt': 1,
      'endpoint_service.job.outcome': 'completed',
    });
    // Each process exports its own spans.
    expect(server.resource['process.pid']).toBe(serve.child.pid);
    expect(job.resource['process.pid']).toBe(tracingWorker.child.pid);
    expect(job.resource['service.name']).toBe('orders-worker');

    const [task, ...otherTasks] = await childrenOf(job, 1);
    expect(otherTasks).toEqual([]);
    expect(task).toMatchObject({ name: 'task ping', kind: INTERNAL });
    expect(task!.attributes).toMatchObject({ 'endpoint_service.task.id': 'ping', 'endpoint_service.task.outcome': 'succeeded' });
    const [attempt] = await childrenOf(task!, 1);
    expect(attempt).toMatchObject({ name: 'attempt 1', kind: CLIENT });
    expect(sent.parentId).toBe(attempt!.spanId);

    // Stored in the job's clear part: the server span's context, with the caller's tracestate.
    expect(stored.data.trace).toEqual({ traceparent: `00-${CLIENT_TRACE}-${server.spanId}-01`, tracestate: CLIENT_HEADERS.tracestate });
    // The control for the test without tracing below: the hook sees the SDK when it is loaded.
    expect(tracingWorkerModules.loaded().some((u) => u.includes('/@opentelemetry/sdk-trace/'))).toBe(true);
  });

  it("ends the span of a run that failed as an error, with the failed task's code", async () => {
    const response = await fetch(`${serve.url}/ping?n=fail`);
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const server = await spanOf(SERVER, requestId);
    const job = await spanOf(CONSUMER, requestId);
    // Without a traceparent from the client, serve began the trace, and the job continues it.
    expect(server.parentSpanId).toBe('');
    expect(job).toMatchObject({ traceId: server.traceId, parentSpanId: server.spanId, statusCode: ERROR });
    expect(job.attributes).toMatchObject({ 'endpoint_service.job.outcome': 'failed', 'error.type': 'http-status' });
    const [task] = await childrenOf(job, 1);
    expect(task).toMatchObject({ name: 'task ping', statusCode: ERROR });
  });

  it('starts a new trace for a job stored without a trace context, in a worker traced by OTEL_EXPORTER_OTLP_ENDPOINT alone', async () => {
    expect((await tracingWorker.stop()).code).toBe(0);
    // As serve: the variable turns tracing on without --otel.
    const envWorker = startWorker(FILE, url!, name, SMTP, traced());
    workers.push(envWorker);
    // A serve without tracing stores no context, and loads nothing of OpenTelemetry to enqueue.
    const plainModules = watch.run();
    const plain = await startServe(FILE, [...queue, '--no-queue-consume', ...SMTP], env(plainModules.env));
    try {
      const response = await fetch(`${plain.url}/ping?n=3`, { headers: CLIENT_HEADERS });
      expect(response.status).toBe(200);
      const requestId = response.headers.get('x-request-id')!;
      const job = await spanOf(CONSUMER, requestId);
      expect(job.parentSpanId).toBe('');
      expect(job.traceId).not.toBe(CLIENT_TRACE);
      expect(job.resource['process.pid']).toBe(envWorker.child.pid);
      expect(parseTraceparent((await pingWith('3')).headers.traceparent).traceId).toBe(job.traceId);
      expect((await storedJob(requestId)).data).not.toHaveProperty('trace');
    } finally {
      expect((await plain.stop()).code).toBe(0);
    }
    expect(plainModules.loaded()).toEqual([]);
    expect(receiver.spans.filter((s) => s.resource['process.pid'] === plain.child.pid)).toEqual([]);
    expect((await envWorker.stop()).code).toBe(0);
  });

  it('exports nothing from a worker without --otel, sends no traceparent, and loads nothing of OpenTelemetry', async () => {
    const modules = watch.run();
    const worker = startWorker(FILE, url!, name, SMTP, env(modules.env));
    workers.push(worker);
    const response = await fetch(`${serve.url}/ping?n=4`, { headers: CLIENT_HEADERS });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const upstream = await pingWith('4');
    expect(upstream.headers.traceparent).toBeUndefined();
    expect(upstream.headers.tracestate).toBeUndefined();
    await worker.waitForLog((line) => line.msg === 'job completed' && line.requestId === requestId);
    // A traced process exports its last spans while it shuts down: anything it had would be here now.
    expect((await worker.stop()).code).toBe(0);
    // serve traced the request (so the receiver was listening); the job was not traced.
    await spanOf(SERVER, requestId);
    expect(receiver.spans.filter((s) => s.resource['process.pid'] === worker.child.pid)).toEqual([]);
    expect(receiver.spans.some(ofRequest(CONSUMER, requestId))).toBe(false);
    expect(modules.loaded()).toEqual([]);
  });
});

describe.skipIf(url === null)('serve --otel --queue running its own jobs', () => {
  const own = uniqueQueueName('tracing-own');
  let serve: RunningService;
  let store: ReturnType<typeof inspect>;

  beforeAll(async () => {
    store = inspect(redisBackend(url!), own);
    serve = await startServe(FILE, ['--queue', url!, '--queue-name', own, '--otel', ...SMTP], traced());
  });
  afterAll(async () => {
    await serve?.stop();
    await store?.close();
  });

  it("traces the job under the request's server span, in the same process", async () => {
    const response = await fetch(`${serve.url}/ping?n=5`, { headers: CLIENT_HEADERS });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const server = await spanOf(SERVER, requestId);
    const job = await spanOf(CONSUMER, requestId);
    expect(job).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: server.spanId });
    expect(job.resource['process.pid']).toBe(serve.child.pid);
    const [task] = await childrenOf(job, 1);
    const [attempt] = await childrenOf(task!, 1);
    expect(parseTraceparent((await pingWith('5')).headers.traceparent)).toEqual({ traceId: CLIENT_TRACE, parentId: attempt!.spanId });
  });
});
