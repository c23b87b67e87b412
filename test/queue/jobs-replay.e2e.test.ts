// `jobs show` with the x-request-id of an answer replayed from the deduplication record: that
// request has no job of its own; the delivery log's `replayOf` names the request that has one,
// and `jobs show` shows that job with a line saying so (docs/queue.md, "Running on several machines").
// The delivery log is the queue's store, as serve --queue records by default.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { eventually, QUEUE_KEY, runCli, uniqueQueueName } from '../helpers/queue.js';
import { deleteKeys, stopSpawnedRedis, testRedisUrl } from '../helpers/redis.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

const REDIS_URL = await testRedisUrl();

describe.skipIf(REDIS_URL === null)('jobs show follows a replayed answer to its job', () => {
  const name = uniqueQueueName('jobs-replay');
  const namespace = `es-test-jobs-replay-${randomBytes(4).toString('hex')}`;
  const env = { ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY, ENDPOINT_SERVICE_DELIVERIES_NAMESPACE: namespace };
  let peer: HttpPeer;
  let service: RunningService;

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/background', { status: 200, body: 'ok' });
    service = await startServe(fixture('dedup'), ['--queue', REDIS_URL!, '--queue-name', name, '--allow-task-host', '127.0.0.1'], {
      ...env,
      PEER: peer.origin,
    });
  });
  afterAll(async () => {
    await service?.stop();
    await peer?.close();
    await deleteKeys(REDIS_URL!, [`${namespace}:`, `bull:${name}:`]);
    await stopSpawnedRedis();
  });

  const jobs = (...args: string[]) => runCli(['jobs', ...args, '--queue', REDIS_URL!, '--queue-name', name], env);

  it('shows the first request’s job, saying it is the job of the request the answer repeated', async () => {
    const headers = { 'x-delivery-id': `d-${randomBytes(4).toString('hex')}` };
    const first = await fetch(`${service.url}/background`, { method: 'POST', headers });
    expect(first.status).toBe(200);
    const again = await fetch(`${service.url}/background`, { method: 'POST', headers });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const firstId = first.headers.get('x-request-id')!;
    const againId = again.headers.get('x-request-id')!;
    await peer.waitForRequests(1, '/background');

    const original = await eventually(async () => {
      const r = await jobs('show', firstId);
      return r.code === 0 && r.stdout.includes('completed') ? r : undefined;
    }, 'the first job to complete');
    // The replay's record is written within the log's batch window.
    const shown = await eventually(async () => {
      const r = await jobs('show', againId);
      return r.code === 0 ? r : undefined;
    }, 'the replay to be recorded');
    expect(shown.stdout).toBe(`${againId} was answered from the deduplication record of request ${firstId}: its job follows\n${original.stdout}`);

    const json = await jobs('show', againId, '--format', 'json');
    expect(json.code).toBe(0);
    expect(json.stderr).toContain(`of request ${firstId}`);
    expect((JSON.parse(json.stdout) as { jobs: { requestId: string }[] }).jobs.map((j) => j.requestId)).toEqual([firstId]);
  });

  it('an id the delivery log does not know either: exit 3, no job', async () => {
    const r = await jobs('show', 'no-such-request');
    expect(r.code).toBe(3);
    expect(r.stderr).toBe('endpoint-service: no job for "no-such-request" in this queue\n');
  });
});
