// OpenTelemetry tracing through the real binary: spans exported over OTLP/HTTP to a receiver on
// loopback (test/helpers/otlp-receiver.ts), W3C traceparent honoured from the client and sent on
// to the task's upstream and a response-from-url upstream, no secret in any exported byte, and
// nothing exported or propagated when tracing is off.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { OTEL_ENV, OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { fixture, StartedServices } from '../helpers/serve.js';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;
const TOKEN = 'token-value-Zq81';
const CARD = 'card-value-Kp93';
const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

const services = new StartedServices();
let peer: HttpPeer;
let receiver: OtlpReceiver;

beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/crm/' + CARD, { status: 201, body: 'created' });
  peer.route('/fail', { status: 400, body: 'no' });
  peer.route('/upstream', { status: 200, body: 'from upstream' });
  receiver = await OtlpReceiver.start();
});
afterAll(async () => {
  await services.stopAll();
  await peer?.close();
  await receiver?.close();
});

function env(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    PEER: peer.origin,
    TOKEN,
    ...OTEL_ENV,
    ...extra,
  };
}

function traced(extra: Record<string, string | undefined> = {}) {
  return services.start(fixture('tracing'), ['--otel'], env({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, ...extra }));
}

/** The spans of the request with this id: its server span and every span under it. */
async function requestTrace(requestId: string, count: number): Promise<{ server: ReceivedSpan; spans: ReceivedSpan[] }> {
  const collect = (all: readonly ReceivedSpan[]) => {
    const server = all.find((s) => s.kind === SERVER && s.attributes['endpoint_service.request_id'] === requestId);
    return server === undefined ? [] : all.filter((s) => s.traceId === server.traceId);
  };
  await receiver.waitFor((all) => collect(all).length >= count);
  const spans = collect(receiver.spans);
  return { server: spans.find((s) => s.kind === SERVER)!, spans };
}

const childrenOf = (spans: readonly ReceivedSpan[], parent: ReceivedSpan) => spans.filter((s) => s.parentSpanId === parent.spanId);

function parseTraceparent(value: string | string[] | undefined): { traceId: string; parentId: string } {
  const match = TRACEPARENT.exec(String(value));
  expect(match, `traceparent ${String(value)}`).not.toBeNull();
  return { traceId: match![1]!, parentId: match![2]! };
}

describe('serve --otel', () => {
  it("exports a server span under the caller's traceparent, a span per task and one per attempt, and sends each attempt's traceparent upstream", async () => {
    // The first attempt of "flaky" fails with a 503 and is retried.
    peer.route('/flaky', { status: 503, body: 'busy' }, { status: 200, body: 'fine' });
    const service = await traced({ OTEL_SERVICE_NAME: 'orders-frontend' });
    const response = await fetch(`${service.url}/order?card=${CARD}`, { headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;

    // server, task crm, its attempt, task flaky, its two attempts
    const { server, spans } = await requestTrace(requestId, 6);
    expect(spans).toHaveLength(6);
    expect(server.traceId).toBe(CLIENT_TRACE);
    expect(server.parentSpanId).toBe(CLIENT_SPAN);
    expect(server.name).toBe('GET order');
    expect(server.attributes).toEqual({
      'http.request.method': 'GET',
      'http.route': 'order',
      'http.response.status_code': 200,
      'endpoint_service.request_id': requestId,
    });
    expect(server.resource['service.name']).toBe('orders-frontend');

    const tasks = childrenOf(spans, server);
    expect(tasks.map((t) => t.name).sort()).toEqual(['task crm', 'task flaky']);
    const crm = tasks.find((t) => t.name === 'task crm')!;
    const flaky = tasks.find((t) => t.name === 'task flaky')!;
    expect(crm.attributes).toEqual({
      'endpoint_service.task.id': 'crm',
      'endpoint_service.task.kind': 'http-request',
      'endpoint_service.task.outcome': 'succeeded',
      'endpoint_service.task.attempts': 1,
    });
    expect(flaky.attributes).toMatchObject({ 'endpoint_service.task.outcome': 'succeeded', 'endpoint_service.task.attempts': 2 });

    const [crmAttempt] = childrenOf(spans, crm);
    expect(crmAttempt).toMatchObject({ name: 'attempt 1', kind: CLIENT });
    expect(crmAttempt!.attributes).toEqual({
      'endpoint_service.task.attempt': 1,
      'endpoint_service.task.outcome': 'succeeded',
      'http.request.method': 'POST',
      'http.response.status_code': 201,
      'server.address': '127.0.0.1',
      'server.port': peer.port,
      'url.scheme': 'http',
    });
    const flakyAttempts = childrenOf(spans, flaky).sort(
      (a, b) => Number(a.attributes['endpoint_service.task.attempt']) - Number(b.attributes['endpoint_service.task.attempt']),
    );
    expect(flakyAttempts.map((a) => [a.name, a.attributes['endpoint_service.task.outcome'], a.attributes['error.type'], a.statusCode])).toEqual([
      ['attempt 1', 'retried', 'http-status', ERROR],
      ['attempt 2', 'succeeded', undefined, 0],
    ]);

    // Each request the upstream received names its attempt as parent, in the caller's trace.
    const crmSent = parseTraceparent(peer.requestsTo('/crm/' + CARD).at(-1)!.headers.traceparent);
    expect(crmSent).toEqual({ traceId: CLIENT_TRACE, parentId: crmAttempt!.spanId });
    const flakySent = peer
      .requestsTo('/flaky')
      .slice(-2)
      .map((r) => parseTraceparent(r.headers.traceparent).parentId);
    expect(flakySent).toEqual(flakyAttempts.map((a) => a.spanId));
  });

  it('marks a failed task and the request it failed with the coded error', async () => {
    const service = await traced();
    const response = await fetch(`${service.url}/failing`);
    expect(response.status).toBe(502);
    const { server, spans } = await requestTrace(response.headers.get('x-request-id')!, 3);
    // Without a traceparent from the client the service starts the trace.
    expect(server.parentSpanId).toBe('');
    expect(server.statusCode).toBe(ERROR);
    expect(server.attributes).toMatchObject({ 'http.response.status_code': 502, 'error.type': '502' });
    const [task] = childrenOf(spans, server);
    expect(task!.statusCode).toBe(ERROR);
    expect(task!.attributes).toMatchObject({ 'endpoint_service.task.id': 'broken', 'endpoint_service.task.outcome': 'failed', 'error.type': 'http-status' });
    const [attempt] = childrenOf(spans, task!);
    expect(attempt!.attributes).toMatchObject({ 'endpoint_service.task.outcome': 'failed', 'error.type': 'http-status', 'http.response.status_code': 400 });
  });

  it('gives a response-from-url call its own client span and sends its traceparent to the upstream', async () => {
    const service = await traced();
    const response = await fetch(`${service.url}/proxy`);
    expect(await response.text()).toBe('from upstream');
    const { server, spans } = await requestTrace(response.headers.get('x-request-id')!, 2);
    const [call] = childrenOf(spans, server);
    expect(call).toMatchObject({ name: 'response-from-url GET', kind: CLIENT });
    expect(call!.attributes).toEqual({
      'http.request.method': 'GET',
      'http.response.status_code': 200,
      'server.address': '127.0.0.1',
      'server.port': peer.port,
      'url.scheme': 'http',
    });
    expect(parseTraceparent(peer.requestsTo('/upstream').at(-1)!.headers.traceparent)).toEqual({ traceId: server.traceId, parentId: call!.spanId });
  });

  it('traces an endpoint without tasks, and exports no query string, parameter value or secret', async () => {
    const service = await traced();
    const response = await fetch(`${service.url}/plain?a=${CARD}`);
    expect(response.status).toBe(200);
    const { server } = await requestTrace(response.headers.get('x-request-id')!, 1);
    expect(server.attributes['http.route']).toBe('plain');
    // Every byte exported so far, by every service of this file: the requests above carried the
    // card number as a path segment, query and form value, and the token in task and upstream URLs.
    const exported = receiver.bodies.join('\n');
    expect(exported).toContain(server.spanId);
    for (const secret of [TOKEN, CARD, 'token=', 'key=', '/crm', '/upstream']) expect(exported).not.toContain(secret);
  });

  it('exports the spans of each worker from that worker with --workers 2', async () => {
    const service = await services.start(fixture('tracing'), ['--otel', '--workers', '2'], env({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }));
    // A new connection per request: the primary hands connections to the workers in turn.
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(
        await new Promise<string>((resolve, reject) => {
          const req = request(`${service.url}/plain?a=${i}`, { agent: false }, (response) => {
            response.resume();
            response.on('end', () => resolve(String(response.headers['x-request-id'])));
          });
          req.on('error', reject);
          req.end();
        }),
      );
    }
    const servers = await Promise.all(ids.map((id) => requestTrace(id, 1).then((t) => t.server)));
    const pids = new Set(servers.map((s) => s.resource['process.pid']));
    expect(pids.size).toBe(2);
    expect(pids.has(service.child.pid)).toBe(false);
  });

  it('takes the sampler from OTEL_TRACES_SAMPLER: always_on records a request its caller marked as not sampled', async () => {
    // The default, parentbased_always_on, would follow the caller's "00" and export nothing.
    // A trace of its own: requestTrace reads the server span of the first request of a trace.
    const unsampledTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const service = await traced({ OTEL_TRACES_SAMPLER: 'always_on' });
    const response = await fetch(`${service.url}/plain?a=1`, { headers: { traceparent: `00-${unsampledTrace}-${CLIENT_SPAN}-00` } });
    expect(response.status).toBe(200);
    const { server } = await requestTrace(response.headers.get('x-request-id')!, 1);
    expect(server).toMatchObject({ traceId: unsampledTrace, parentSpanId: CLIENT_SPAN, name: 'GET plain' });
  });

  it('is on without the option when OTEL_EXPORTER_OTLP_ENDPOINT is set', async () => {
    const service = await services.start(fixture('tracing'), [], env({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }));
    const response = await fetch(`${service.url}/plain?a=1`);
    const { server } = await requestTrace(response.headers.get('x-request-id')!, 1);
    expect(server.name).toBe('GET plain');
  });
});

describe('without tracing', () => {
  // Each service is stopped with SIGTERM before the receiver is read: a traced service exports
  // its last spans while shutting down, so anything it would have sent has arrived by then.
  async function runOnce(args: string[], extra: Record<string, string | undefined>): Promise<{ exported: number; traceparent: unknown }> {
    const before = receiver.bodies.length;
    const service = await services.start(fixture('tracing'), args, env(extra));
    const response = await fetch(`${service.url}/proxy`, { headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } });
    expect(await response.text()).toBe('from upstream');
    const exit = await service.stop();
    expect(exit.code).toBe(0);
    return { exported: receiver.bodies.length - before, traceparent: peer.requestsTo('/upstream').at(-1)!.headers.traceparent };
  }

  it('exports nothing and sends no traceparent on, even when the client sent one', async () => {
    expect(await runOnce([], {})).toEqual({ exported: 0, traceparent: undefined });
  });

  it('stays off with OTEL_SDK_DISABLED=true although an endpoint is set; --otel then turns it on', async () => {
    const disabled = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SDK_DISABLED: 'true' };
    expect(await runOnce([], disabled)).toEqual({ exported: 0, traceparent: undefined });
    const on = await runOnce(['--otel'], disabled);
    expect(on.exported).toBeGreaterThan(0);
    expect(parseTraceparent(on.traceparent as string).traceId).toBe(CLIENT_TRACE);
  });
});
