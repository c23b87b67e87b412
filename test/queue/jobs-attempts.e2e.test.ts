// What `jobs` counts as a job's attempts: every attempt started, the running one included (not
// only those that ended), so a job whose first attempt is running says `attempts 1`. The
// attempts around a `jobs retry` are counted in retries.e2e.test.ts.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { eventually, QUEUE_KEY, runCli, uniqueQueueName } from '../helpers/queue.js';
import { deleteKeys, stopSpawnedRedis, testRedisUrl } from '../helpers/redis.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

const REDIS_URL = await testRedisUrl();

describe.skipIf(REDIS_URL === null)('jobs counts the attempt that runs', () => {
  const name = uniqueQueueName('jobs-attempts');
  const env = { ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY };
  let peer: HttpPeer;
  let service: RunningService;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/background', { status: 200, body: 'ok', hold: () => held });
    service = await startServe(fixture('dedup'), ['--queue', REDIS_URL!, '--queue-name', name, '--deliveries', 'none'], { ...env, PEER: peer.origin });
  });
  afterAll(async () => {
    release();
    await service?.stop();
    await peer?.close();
    await deleteKeys(REDIS_URL!, [`bull:${name}:`]);
    await stopSpawnedRedis();
  });

  const jobs = (...args: string[]) => runCli(['jobs', ...args, '--queue', REDIS_URL!, '--queue-name', name], env);

  it('attempts 1 while the first attempt runs, and still 1 once it completed', async () => {
    const response = await fetch(`${service.url}/background`, { method: 'POST', headers: { 'x-delivery-id': `d-${randomBytes(4).toString('hex')}` } });
    expect(response.status).toBe(200);
    const id = response.headers.get('x-request-id')!;
    await peer.waitForRequests(1, '/background');
    const running = await jobs('show', id);
    expect(running.code).toBe(0);
    expect(running.stdout.split('\n')[0]).toMatch(new RegExp(`^${id}  background  active  attempts 1  `));
    const listed = await jobs('list', '--state', 'active', '--format', 'json');
    expect((JSON.parse(listed.stdout) as { jobs: { requestId: string; attempts: number }[] }).jobs).toEqual([
      expect.objectContaining({ requestId: id, attempts: 1 }),
    ]);

    release();
    const done = await eventually(async () => {
      const r = await jobs('show', id);
      return r.stdout.includes(' completed ') ? r : undefined;
    }, 'the job to complete');
    expect(done.stdout.split('\n')[0]).toMatch(/ {2}completed {2}attempts 1 {2}/);
  });
});
