// Readiness apart from liveness (docs/behaviour.md, "Probes"): /_ready answers 503 while this
// instance cannot serve every endpoint (the queue store of --queue is unreachable, so its
// background endpoints answer 503; or it is shutting down), and /_health stays 200 for as long
// as the process serves. Through the real binary, with a redis-server of the test's own that the
// test stops and starts again (the shared Redis must not be stopped).
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { eventually, QUEUE_KEY, queueFixture, redisServerOnPath, spawnRedis, uniqueQueueName, type OwnRedis } from '../helpers/queue.js';
import { fixture, StartedServices } from '../helpers/serve.js';

const services = new StartedServices();
const stores: OwnRedis[] = [];
let peer: HttpPeer;

beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/fine', { status: 200 });
  peer.route('/picky', { status: 200 });
});
afterAll(async () => {
  await services.stopAll();
  await Promise.all(stores.map((s) => s.stop()));
  await peer?.close();
});

async function probe(url: string): Promise<{ status: number; type: string | null; body: Record<string, unknown> }> {
  const response = await fetch(url, { headers: { connection: 'close' } });
  return { status: response.status, type: response.headers.get('content-type'), body: (await response.json()) as Record<string, unknown> };
}

describe('GET /_ready without --queue', () => {
  it('is 200 while serving, at the root whatever --base-path, and HEAD answers the same', async () => {
    const service = await services.start(fixture('basic'), ['--base-path', '/app']);
    expect(await probe(`${service.url}/_ready`)).toEqual({ status: 200, type: 'application/json', body: { status: 'ready' } });
    const head = await fetch(`${service.url}/_ready`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect((await fetch(`${service.url}/_ready`, { method: 'POST' })).status).toBe(405);
  });

  it('is 503 while shutting down', async () => {
    const service = await services.start(fixture('basic'));
    const { port, hostname } = new URL(service.url);
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // A request under way when the signal comes (its last line is sent after it).
    socket.write('GET /_ready HTTP/1.1\r\nHost: x\r\n');
    // Shutdown closes connections that have sent nothing yet: let the server read these bytes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    service.child.kill('SIGTERM');
    await service.waitForLog((l) => l.msg === 'shutting down');
    const answer = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
      socket.on('close', () => resolve(text));
    });
    socket.write('\r\n');
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 503 /);
    expect(text).toMatch(/\r\ncontent-type: application\/problem\+json\r\n/i);
    expect(text).toContain('shutting down');
  });
});

describe.runIf(redisServerOnPath())('GET /_ready with --queue and a store that goes down', () => {
  const name = uniqueQueueName('ready');
  const serveOn = async (redis: OwnRedis, ...args: string[]) =>
    services.start(queueFixture('durable'), ['--queue', redis.url, '--queue-name', name, '--no-queue-consume', '--smtp-url', 'smtp://127.0.0.1:1', ...args], {
      PEER: peer.origin,
      ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY,
    });

  it('turns 503 while background endpoints answer 503, /_health stays 200, and turns 200 again when the store is back', async () => {
    const redis = (await spawnRedis())!;
    stores.push(redis);
    const serve = await serveOn(redis);
    await serve.waitForLog((l) => l.msg === 'the queue store is reachable');
    expect(await probe(`${serve.url}/_ready`)).toEqual({ status: 200, type: 'application/json', body: { status: 'ready', queue: 'up' } });
    expect((await fetch(`${serve.url}/two`, { method: 'POST' })).status).toBe(200);

    await redis.stop();
    expect((await fetch(`${serve.url}/two`, { method: 'POST' })).status).toBe(503);
    const ready = await eventually(async () => {
      const answer = await probe(`${serve.url}/_ready`);
      return answer.status === 200 ? undefined : answer;
    }, '/_ready to turn 503');
    expect(ready.status).toBe(503);
    expect(ready.type).toBe('application/problem+json');
    expect(ready.body.detail).toBe('the queue store is unreachable: background endpoints answer 503');
    expect((await fetch(`${serve.url}/_ready`, { method: 'HEAD' })).headers.get('retry-after')).toBe('5');
    // Liveness is not readiness: restarting this process would not bring the store back.
    expect(await probe(`${serve.url}/_health`)).toEqual({ status: 200, type: 'application/json', body: { status: 'ok', queue: 'unreachable' } });

    const again = (await spawnRedis(undefined, redis.port))!;
    stores.push(again);
    await eventually(async () => ((await probe(`${serve.url}/_ready`)).status === 200 ? true : undefined), '/_ready to turn 200 again');
    expect((await fetch(`${serve.url}/two`, { method: 'POST' })).status).toBe(200);
  }, 60_000);

  it('stays 200 with --queue-fallback in-process, which serves background endpoints without the store', async () => {
    const redis = (await spawnRedis())!;
    stores.push(redis);
    const serve = await serveOn(redis, '--queue-fallback', 'in-process');
    await serve.waitForLog((l) => l.msg === 'the queue store is reachable');
    await redis.stop();
    await serve.waitForLog((l) => l.msg === 'the queue store is unreachable; retrying');
    expect(await probe(`${serve.url}/_ready`)).toEqual({ status: 200, type: 'application/json', body: { status: 'ready', queue: 'unreachable' } });
    expect((await fetch(`${serve.url}/two`, { method: 'POST' })).status).toBe(200);
  }, 60_000);
});
