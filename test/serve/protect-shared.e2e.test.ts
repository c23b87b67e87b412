// Rate limits that hold for a whole service, through the real binary: with --workers 2 one
// count for both workers (the primary counts), and with --rate-limit-store one count for every
// serve process sharing a Redis (found as every suite finds it, helpers/redis.ts; it may be
// shared with other runs, so each case uses a key prefix of its own and deletes its keys). A
// Redis that cannot be reached lets requests through (fail open), logged and counted.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, StartedServices, type RunningService } from '../helpers/serve.js';
import { QUEUE_KEY } from '../helpers/queue.js';
import { deleteKeys, keysUnder, stopSpawnedRedis, testRedisUrl, uniqueKeyPrefix } from '../helpers/redis.js';
import { closedPort } from '../helpers/smtp-peer.js';

const FIXTURE = fixture('protect');
const REDIS_URL = await testRedisUrl();
/** A case that needs Redis; skipped (testRedisUrl printed why) without one. */
const withRedis = REDIS_URL === null ? it.skip : it;
/** The fixture's contact form sends mail; no mail is sent in these cases. */
const SMTP = ['--smtp-url', 'smtp://127.0.0.1:9'];

let peer: HttpPeer;
const services = new StartedServices();
const prefixes: string[] = [];

beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/crm/limited', { status: 200, body: 'ok' });
});
afterAll(async () => {
  await services.stopAll();
  await peer?.close();
  if (REDIS_URL !== null) await deleteKeys(REDIS_URL, prefixes);
  await stopSpawnedRedis();
});

/** A POST over a connection of its own, so the primary hands each to the next worker. */
function postOnNewConnection(service: RunningService, endpoint: string): Promise<{ status: number; requestId: string }> {
  const url = new URL(`${service.url}/${endpoint}`);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent: false, headers: { 'content-type': 'application/x-www-form-urlencoded', connection: 'close' } }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, requestId: String(response.headers['x-request-id']) }));
    });
    request.on('error', reject);
    request.end('');
  });
}

const pidsOf = (service: RunningService, requestIds: readonly string[]) =>
  new Set(service.logs().filter((l) => l.msg === 'request' && requestIds.includes(String(l.requestId))).map((l) => l.pid));

describe('one limit for the whole service', () => {
  it('--workers 2: both workers answer, and together they let 3 requests through, not 3 each', async () => {
    const service = await services.start(FIXTURE, ['--workers', '2', ...SMTP], { PEER: peer.origin });
    const before = peer.requestsTo('/crm/limited').length;
    const answers: Awaited<ReturnType<typeof postOnNewConnection>>[] = [];
    for (let i = 0; i < 8; i++) answers.push(await postOnNewConnection(service, 'limited'));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
    await service.waitForLog((l) => l.msg === 'request' && l.requestId === answers[7]!.requestId);
    // Without this the case could pass with one worker doing all the counting.
    expect(pidsOf(service, answers.map((a) => a.requestId)).size).toBe(2);
    expect(peer.requestsTo('/crm/limited').length - before).toBe(3);
  });

  /** Two instances started with `args`, six requests alternating between them: one count in Redis under `prefix`. */
  async function expectOneCountInRedis(args: readonly string[], env: Record<string, string>, prefix: string): Promise<void> {
    const [a, b] = await Promise.all([services.start(FIXTURE, args, env), services.start(FIXTURE, args, env)]);
    const before = peer.requestsTo('/crm/limited').length;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await postOnNewConnection(i % 2 === 0 ? a : b, 'limited')).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
    expect(peer.requestsTo('/crm/limited').length - before).toBe(3);
    // The count is in Redis, under the prefix given.
    expect((await keysUnder(REDIS_URL!, prefix)).length).toBeGreaterThan(0);
  }

  withRedis('--rate-limit-store redis://: two serve processes sharing it let 3 requests through in all', async () => {
    const prefix = uniqueKeyPrefix('rate');
    prefixes.push(prefix);
    await expectOneCountInRedis(['--rate-limit-store', REDIS_URL!, '--rate-limit-prefix', prefix, ...SMTP], { PEER: peer.origin }, prefix);
  });

  withRedis("--queue without --rate-limit-store: the queue's Redis holds the count, shared by both instances", async () => {
    const prefix = uniqueKeyPrefix('rate');
    const queueName = `rate-${randomUUID()}`;
    // BullMQ's own keys of this queue are removed with the counts.
    prefixes.push(prefix, `bull:${queueName}:`);
    const args = ['--queue', REDIS_URL!, '--queue-name', queueName, '--no-queue-consume', '--rate-limit-prefix', prefix, ...SMTP];
    await expectOneCountInRedis(args, { PEER: peer.origin, ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY }, prefix);
  });

  it('a Redis that cannot be reached lets requests through, says so in the log and counts it', async () => {
    const port = await closedPort();
    const service = await services.start(FIXTURE, ['--rate-limit-store', `redis://127.0.0.1:${port}`, ...SMTP], { PEER: peer.origin });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await postOnNewConnection(service, 'limited')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    await service.waitForLog((l) => l.level === 'warn' && String(l.msg).includes('rate limit store cannot be reached'));
    const metrics = await (await fetch(`${service.url}/_metrics`)).text();
    expect(metrics).toMatch(/endpoint_service_guard_outcomes_total\{endpoint="limited",check="rate-limit",outcome="store-unavailable"\} 5/);
  });
});
