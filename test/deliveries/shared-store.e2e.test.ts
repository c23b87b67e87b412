// The delivery log in a shared store: two serve instances on one Redis write one log, a replay
// asked of that log is carried out by one of them, and a worker adds the outcome of the task it
// ran for a request serve queued.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../cli/helpers.js';
import { HttpPeer } from '../helpers/http-peer.js';
import { QUEUE_KEY, startWorker, uniqueQueueName } from '../helpers/queue.js';
import { deleteKeys, stopSpawnedRedis, testRedisUrl } from '../helpers/redis.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

const REDIS_URL = await testRedisUrl();
const KEY = randomBytes(32).toString('base64');

interface Delivery {
  id: string;
  verdict: string;
  replayOf: string | null;
  job: string | null;
  tasks: { id: string; state: string }[];
}

describe.skipIf(REDIS_URL === null)('the delivery log on Redis', () => {
  const namespace = `es-test-shared-${randomBytes(4).toString('hex')}`;
  const env = { ENDPOINT_SERVICE_DELIVERIES_KEY: KEY, ENDPOINT_SERVICE_DELIVERIES_NAMESPACE: namespace };
  const cli = (...args: string[]) => run(['deliveries', ...args, '--deliveries', REDIS_URL!], { env });
  let peer: HttpPeer;
  const services: RunningService[] = [];

  async function shown(id: string, done: (d: Delivery) => boolean = () => true): Promise<Delivery> {
    for (let i = 0; ; i++) {
      const r = await cli('show', id, '--format', 'json');
      if (r.exitCode === 0 && done(JSON.parse(r.stdout) as Delivery)) return JSON.parse(r.stdout) as Delivery;
      if (i > 100) throw new Error(`delivery ${id}: ${r.stderr}${r.stdout}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/crm', { status: 200, body: 'ok' });
    peer.route('/slow', { status: 200, body: 'ok' });
  });

  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await peer?.close();
    await deleteKeys(REDIS_URL!, [`${namespace}:`]);
    await stopSpawnedRedis();
  });

  it('keeps one log for two instances, and either carries out a replay', async () => {
    for (let i = 0; i < 2; i++) services.push(await startServe(fixture('deliveries'), ['--deliveries', REDIS_URL!], { PEER: peer.origin, ...env }));
    const ids: string[] = [];
    for (const service of services) {
      const response = await fetch(`${service.url}/contact`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=Ada&message=hi',
      });
      expect(response.status).toBe(200);
      ids.push(response.headers.get('x-request-id')!);
    }
    for (const id of ids) await shown(id);
    const listed = await cli('list', '--format', 'json');
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { deliveries: Delivery[] }).deliveries.map((d) => d.id)).toEqual([ids[1], ids[0]]);

    const before = peer.requestsTo('/crm').length;
    const replayed = await cli('replay', ids[0]!, '--format', 'json');
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ replayOf: ids[0], verdict: 'accepted' });
    expect(peer.requestsTo('/crm').length).toBe(before + 1);
  });

  it('adds the outcome of a task a worker ran to the delivery serve queued', async () => {
    const name = uniqueQueueName('deliveries');
    const serve = await startServe(fixture('deliveries'), ['--queue', REDIS_URL!, '--queue-name', name, '--no-queue-consume'], {
      PEER: peer.origin,
      ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY,
      ...env,
      ENDPOINT_SERVICE_DELIVERIES_KEY: undefined,
    });
    services.push(serve);
    const response = await fetch(`${serve.url}/later`, { method: 'POST' });
    expect(response.status).toBe(200);
    const id = response.headers.get('x-request-id')!;
    const queued = await shown(id);
    expect(queued.verdict).toBe('accepted');
    expect(queued.job).toEqual(expect.any(String));
    expect(queued.tasks).toEqual([expect.objectContaining({ id: 'slow', state: 'pending' })]);

    const worker = startWorker(fixture('deliveries'), REDIS_URL!, name, [], { PEER: peer.origin, ...env, ENDPOINT_SERVICE_DELIVERIES_KEY: undefined });
    try {
      const ran = await shown(id, (d) => d.tasks[0]?.state !== 'pending');
      expect(ran.tasks).toEqual([expect.objectContaining({ id: 'slow', state: 'succeeded' })]);
    } finally {
      await worker.stop();
      await deleteKeys(REDIS_URL!, [`bull:${name}:`]);
    }
  });
});
