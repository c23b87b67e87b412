// The texts of task failures hold values of the request: a path built from a parameter, a
// recipient. The store keeps in clear only what holds none (the task, its error code, outcomes),
// the texts sealed; `jobs list` and `jobs show` print the codes, and only `jobs show --reveal`,
// with ENDPOINT_SERVICE_QUEUE_KEY, the texts. Everything the store holds for the queue is read
// straight from it and searched for the values.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { HttpPeer } from '../helpers/http-peer.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import { eventually, inspect, queueBackends, queueFixture, QUEUE_KEY, runCli, runsOn, startWorker, stopSpawnedRedis, uniqueQueueName, type AvailableBackend, type RunningWorker, type StoreInspector } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);
const name = uniqueQueueName('error-texts');
const ID = 'PII-ID-4711';
const RECIPIENT = 'pii-mail-4711@example.test';
const MARKERS = [ID, 'pii-mail-4711'];

/** Every value of every key of the queue, whatever its type (Redis), or every row of its jobs (PostgreSQL). */
async function everythingStored(backend: AvailableBackend, store: StoreInspector, jobIds: readonly string[]): Promise<string> {
  if (backend.name === 'postgres') return (await Promise.all(jobIds.map((id) => store.stored(id)))).join('\n');
  const redis = new Redis(backend.url);
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `bull:${name}:*`, 'COUNT', 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    const values = await Promise.all(
      keys.map(async (key) => {
        const type = await redis.type(key);
        switch (type) {
          case 'string':
            return (await redis.get(key)) ?? '';
          case 'hash':
            return JSON.stringify(await redis.hgetall(key));
          case 'list':
            return (await redis.lrange(key, 0, -1)).join('\n');
          case 'set':
            return (await redis.smembers(key)).join('\n');
          case 'zset':
            return (await redis.zrange(key, 0, -1)).join('\n');
          case 'stream':
            return JSON.stringify(await redis.xrange(key, '-', '+'));
          default:
            throw new Error(`a key of type ${type} in the queue: ${key}`);
        }
      }),
    );
    expect(keys.length).toBeGreaterThan(0);
    return [...keys, ...values].join('\n');
  } finally {
    redis.disconnect();
  }
}

describe.each(backends)('error texts of failed tasks on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  let peer: HttpPeer;
  let smtp: SmtpPeer;
  let serve: RunningService;
  let worker: RunningWorker;
  let store: StoreInspector;
  const requests: Record<'lookup' | 'notify', string> = { lookup: '', notify: '' };
  const jobs = (...args: string[]) => runCli(['jobs', ...args, '--queue', url, '--queue-name', name]);

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route(`/status/${ID}`, { status: 503 });
    smtp = await SmtpPeer.start({ refuseRecipients: [RECIPIENT] });
    store = inspect(backend, name);
    serve = await startServe(queueFixture('error-texts'), ['--queue', url, '--queue-name', name, '--no-queue-consume', '--queue-attempts', '2', '--queue-backoff', '10ms', '--smtp-url', smtp.url], {
      PEER: peer.origin,
      ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY,
    });
    worker = startWorker(queueFixture('error-texts'), url, name, ['--smtp-url', smtp.url], { PEER: peer.origin });
    for (const [endpoint, body] of [
      ['lookup', { id: ID }],
      ['notify', { to: RECIPIENT }],
    ] as const) {
      const response = await fetch(`${serve.url}/${endpoint}`, { method: 'POST', body: new URLSearchParams(body) });
      expect(response.status).toBe(200);
      requests[endpoint] = response.headers.get('x-request-id')!;
    }
    // The HTTP task failed on both attempts (a retry, then for good); the mail was refused.
    await eventually(async () => ((await store.queue.getJobs(['failed'])).length === 2 ? true : undefined), 'both jobs to fail');
    expect(peer.requestsTo(`/status/${ID}`).length).toBeGreaterThanOrEqual(2);
    expect(smtp.recipientsTried).toContain(RECIPIENT);
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await serve?.stop();
    await peer?.close();
    await smtp?.close();
    await store?.close();
  });

  const expectNoMarker = (text: string) => {
    for (const marker of MARKERS) expect(text).not.toContain(marker);
  };

  it('keeps no value of the request in clear in the store: the texts are sealed', async () => {
    const ids = (await store.queue.getJobs(['failed'])).map((j) => j.id!);
    const stored = await everythingStored(backend, store, ids);
    // What is in clear says what failed and why, without the values.
    expect(stored).toContain('fetch-status');
    expectNoMarker(stored);
  });

  it('lists the failed jobs with the task and its error code, no value, as text and as JSON', async () => {
    const text = await jobs('list', '--state', 'failed');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`${requests.lookup}  lookup  failed .*  task "fetch-status" failed \\(http-status\\)\n`));
    expect(text.stdout).toMatch(new RegExp(`${requests.notify}  notify  failed .*  task "tell" failed \\(\\S+\\)\n`));
    expectNoMarker(text.stdout);

    const json = await jobs('list', '--state', 'failed', '--format', 'json');
    expect(json.code).toBe(0);
    const listed = (JSON.parse(json.stdout) as { jobs: { requestId: string; failedTask: string; code: string }[] }).jobs;
    expect(listed.find((j) => j.requestId === requests.lookup)).toMatchObject({ failedTask: 'fetch-status', code: 'http-status' });
    expect(listed.find((j) => j.requestId === requests.notify)).toMatchObject({ failedTask: 'tell' });
    expectNoMarker(json.stdout);
  });

  it('shows each job with its tasks’ codes and attempt history, no value, as text and as JSON', async () => {
    for (const requestId of Object.values(requests)) {
      const text = await jobs('show', requestId);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/ {2}task (fetch-status|tell): failed \(\S+\)\n/);
      expectNoMarker(text.stdout);
      const json = await jobs('show', requestId, '--format', 'json');
      expect(json.code).toBe(0);
      expectNoMarker(json.stdout);
    }
    const history = await jobs('show', requests.lookup);
    expect(history.stdout).toContain('retry scheduled: task "fetch-status" failed (http-status)');
  });

  it('prints the texts with --reveal, which needs the key', async () => {
    const lookup = await jobs('show', requests.lookup, '--reveal');
    expect(lookup.code).toBe(0);
    expect(lookup.stdout).toMatch(new RegExp(`  task fetch-status: failed \\(http-status\\): ".*/status/${ID}.*"\\n`));
    const notify = await jobs('show', requests.notify, '--reveal', '--format', 'json');
    expect(notify.code).toBe(0);
    const [job] = (JSON.parse(notify.stdout) as { jobs: { tasks: Record<string, { error?: string }> }[] }).jobs;
    expect(job!.tasks.tell!.error).toContain(`to ${RECIPIENT}`);

    const keyless = await runCli(['jobs', 'show', requests.lookup, '--reveal', '--queue', url, '--queue-name', name], { ENDPOINT_SERVICE_QUEUE_KEY: undefined });
    expect(keyless.code).toBe(2);
    expectNoMarker(keyless.stdout);
  });
});
