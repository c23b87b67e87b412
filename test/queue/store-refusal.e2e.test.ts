// A store that answers but refuses what the URL asks (a wrong or missing password, a Redis
// database it does not have) is refused at start with one line and exit 2, by serve --queue,
// serve --rate-limit-store, worker and jobs: retrying cannot change the answer, and ioredis would
// use database 0 instead of a missing one, where nothing else looks. A Redis of the test's own,
// with a password and 4 databases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_KEY, queueFixture, runCli, spawnRedis, uniqueQueueName, type OwnRedis } from '../helpers/queue.js';
import { runServeToExit, startServe } from '../helpers/serve.js';

const PASSWORD = 'the-right-one-4711';
const APP = queueFixture('basic');
const ENV = { PEER: 'http://127.0.0.1:1', CRM_KEY: 'k', ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY, ENDPOINT_SERVICE_SMTP_URL: 'smtp://127.0.0.1:1' };

let redis: OwnRedis | null = null;
let host = '';
beforeAll(async () => {
  redis = await spawnRedis(['--save', '', '--appendonly', 'no', '--requirepass', PASSWORD, '--databases', '4']);
  if (redis === null) {
    if (process.env.CI === 'true') throw new Error('redis-server is not on PATH');
    console.warn('skipped: no redis-server on PATH for the refused-store suite');
  } else host = `127.0.0.1:${redis.port}`;
});
afterAll(async () => {
  await redis?.stop();
});

const oneLine = (stderr: string) => stderr.trimEnd().split('\n');

async function serve(args: readonly string[]) {
  return runServeToExit(APP, ['--port', '0', '--workers', '1', '--queue-name', uniqueQueueName('refusal'), ...args], ENV);
}

const cases = [
  {
    what: 'a wrong password',
    url: () => `redis://:wrong@${host}`,
    says: /--queue: Redis at 127\.0\.0\.1:\d+ refused the user name or password of the URL \(WRONGPASS\)/,
  },
  {
    what: 'no password where one is required',
    url: () => `redis://${host}`,
    says: /--queue: Redis at 127\.0\.0\.1:\d+ requires a password and the URL gives none \(NOAUTH\)/,
  },
  { what: 'a database the server does not have', url: () => `redis://:${PASSWORD}@${host}/99`, says: /--queue: Redis at 127\.0\.0\.1:\d+ has no database 99/ },
];

describe.each(cases)('$what', ({ url, says }) => {
  it('serve --queue: exit 2, one line, the password never shown', async () => {
    if (redis === null) return;
    const r = await serve(['--queue', url()]);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(says);
    expect(r.stderr).not.toContain(PASSWORD);
    expect(r.stdout).toBe('');
  });

  it('worker: exit 2, one line', async () => {
    if (redis === null) return;
    const r = await runCli(['worker', APP, '--port', '0', '--queue', url(), '--queue-name', uniqueQueueName('refusal')], ENV);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(says);
  });

  it('jobs list: exit 2, one line (it would read another database)', async () => {
    if (redis === null) return;
    const r = await runCli(['jobs', 'list', '--queue', url()], ENV);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(says);
  });
});

describe('--rate-limit-store', () => {
  it('a wrong password: exit 2, one line naming the option', async () => {
    if (redis === null) return;
    const r = await runServeToExit(queueFixture('basic'), ['--port', '0', '--workers', '1', '--rate-limit-store', `redis://:wrong@${host}`], ENV);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/--rate-limit-store: Redis at 127\.0\.0\.1:\d+ refused the user name or password/);
  });
});

describe('what is not refused', () => {
  it('the right password and an existing database: jobs answers (exit 0)', async () => {
    if (redis === null) return;
    const r = await runCli(['jobs', 'list', '--queue', `redis://:${PASSWORD}@${host}/3`, '--queue-name', uniqueQueueName('refusal')], ENV);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});

describe('PostgreSQL', () => {
  const given = process.env.ENDPOINT_SERVICE_TEST_POSTGRES_URL;
  it('a database the server does not have (3D000): serve --queue exits 2 with one line', async () => {
    if (given === undefined || given === '') return;
    const url = new URL(given);
    url.pathname = '/no_such_database_endpoint_service';
    const r = await serve(['--queue', url.href]);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/--queue: PostgreSQL at [^ ]+ has no such database \(3D000\)/);
  });
});

describe('a store that cannot be reached, in words (jobs: exit 4)', () => {
  it('rediss:// to a Redis without TLS: says to use redis://, not ETIMEDOUT alone', async () => {
    if (redis === null) return;
    const r = await runCli(['jobs', 'list', '--queue', `rediss://:${PASSWORD}@${host}`], ENV);
    expect(r.code).toBe(4);
    expect(oneLine(r.stderr)).toEqual([
      `endpoint-service: the queue store cannot be reached: ${host} did not complete a TLS handshake (ETIMEDOUT): if that Redis does not speak TLS, use redis:// instead of rediss://; otherwise check the host and port`,
    ]);
  });

  it('serve logs the same reason while it retries', async () => {
    if (redis === null) return;
    const service = await startServe(APP, ['--queue', `rediss://:${PASSWORD}@${host}`, '--queue-name', uniqueQueueName('refusal'), '--no-queue-consume'], ENV);
    try {
      const line = await service.waitForLog((l) => l.msg === 'the queue store is unreachable; retrying');
      expect(String(line.reason)).toContain('did not complete a TLS handshake');
      expect(service.stderr()).not.toContain(PASSWORD);
    } finally {
      await service.stop();
    }
  });
});
