// README "Background tasks on a queue", the walkthrough on one machine: the webhooks example
// served enqueue-only and run by a worker, a GitHub delivery answered 202 once stored, the chat
// message and the relay sent by the worker, and `jobs show` with the answer's request id listing
// each task's outcome as the README prints it. Redis only, as the README's walkthrough.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { ROOT, startServe, type RunningService } from '../helpers/serve.js';
import { inspect, QUEUE_KEY, runCli, startWorker, stopSpawnedRedis, testRedisUrl, uniqueQueueName, type RunningWorker } from '../helpers/queue.js';

const REDIS_URL = await testRedisUrl();
const APP = path.join(ROOT, 'fixtures/webhooks/endpoints.xml');
const DELIVERY = readFileSync(path.join(ROOT, 'fixtures/webhooks/issues-opened.json'));
const SECRET = 'It-is-a-secret';
/** As the README signs it with openssl: sha256= and the hex HMAC-SHA256 of the file. */
const SIGNATURE = 'sha256=' + createHmac('sha256', SECRET).update(DELIVERY).digest('hex');
const name = uniqueQueueName('walkthrough');

describe.skipIf(REDIS_URL === null)('the README walkthrough of serve --no-queue-consume and worker', () => {
  let peers: HttpPeer;
  let serve: RunningService;
  let worker: RunningWorker;
  beforeAll(async () => {
    peers = await HttpPeer.start();
    peers.route('/chat', { status: 200, body: 'ok' }).route('/relay', { status: 200, body: '' });
    const env = { CHAT_WEBHOOK_URL: peers.url('/chat'), RELAY_URL: peers.url('/relay'), ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY, GITHUB_WEBHOOK_SECRET: SECRET };
    serve = await startServe(APP, ['--queue', REDIS_URL!, '--queue-name', name, '--no-queue-consume'], env);
    worker = startWorker(APP, REDIS_URL!, name, [], env);
    await worker.origin;
  });
  afterAll(async () => {
    await worker?.stop();
    await serve?.stop();
    await peers?.close();
    await inspect({ name: 'redis', url: REDIS_URL!, skipped: null, toString: () => 'Redis' }, name).close();
    await stopSpawnedRedis();
  });

  it('answers 202 once the job is stored; the worker sends the chat message and the relay; jobs show lists each task', async () => {
    const response = await fetch(`${serve.url}/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-hub-signature-256': SIGNATURE },
      body: DELIVERY,
    });
    expect(response.status).toBe(202);
    const requestId = response.headers.get('x-request-id')!;
    await peers.waitForRequests(1, '/chat');
    await peers.waitForRequests(1, '/relay');
    expect(peers.requestsTo('/chat')[0]!.body).toContain('Codertocat opened issue #1 in Codertocat/Hello-World');
    // Each task once, in the order its outcome was recorded (chat-issue and relay run concurrently).
    await worker.waitForLog((l) => l.msg === 'job completed' && l.requestId === requestId);
    const shown = await runCli(['jobs', 'show', requestId, '--queue', REDIS_URL!, '--queue-name', name]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^${requestId} {2}github {2}completed {2}attempts 1 {2}enqueued \\S+\\n`));
    expect(shown.stdout.split('\n').slice(1, 4).sort()).toEqual(['  task chat-issue: succeeded', '  task chat-push: skipped', '  task relay: succeeded']);
  });
});
