// jobs show --reveal: the job's bound parameters, opened with ENDPOINT_SERVICE_QUEUE_KEY, the
// values a task keeps secret (an Authorization header, basic authentication) masked as dry-run
// masks them. Without the key, or with one that does not open the job, exit 2 and print nothing.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type RunningService } from '../helpers/serve.js';
import { inspect, QUEUE_KEY, queueBackends, queueFixture, runCli, runsOn, stopSpawnedRedis, uniqueQueueName, type StoreInspector } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);
const name = uniqueQueueName('reveal');
const TOKEN = 'tok-5c1e90a7';
const PASSWORD = 'pw-a81f3b';
const EMAIL = 'ann@example.test';
const COMMENT = 'two\nlines \u001b[31mred';

describe.each(backends)('jobs show --reveal on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  let serve: RunningService;
  let store: StoreInspector;
  let requestId = '';
  const show = (args: string[], env: Record<string, string | undefined> = {}) => runCli(['jobs', 'show', requestId, '--queue', url, '--queue-name', name, ...args], env);

  beforeAll(async () => {
    store = inspect(backend, name);
    // Nothing consumes the queue: the job waits, as a failed one would, to be shown.
    serve = await startServe(queueFixture('reveal'), ['--queue', url, '--queue-name', name, '--no-queue-consume'], { PEER: 'http://127.0.0.1:1', ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY });
    const response = await fetch(`${serve.url}/signup`, { method: 'POST', body: new URLSearchParams({ email: EMAIL, token: TOKEN, password: PASSWORD, comment: COMMENT }) });
    expect(response.status).toBe(200);
    requestId = response.headers.get('x-request-id')!;
  });
  afterAll(async () => {
    await serve?.stop();
    await store?.close();
  });

  it('prints the parameters, secrets as ***, values quoted so that none can break the output', async () => {
    const shown = await show(['--reveal']);
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^${requestId}  signup  waiting`));
    expect(lines.slice(1, 5)).toEqual([`  parameter email: "${EMAIL}"`, '  parameter token: ***', '  parameter password: ***', `  parameter comment: ${JSON.stringify(COMMENT)}`]);
    for (const secret of [TOKEN, PASSWORD, '\u001b']) expect(shown.stdout).not.toContain(secret);
  });

  it('adds them to --format json, with the names it masked', async () => {
    const shown = await show(['--reveal', '--format', 'json']);
    expect(shown.code).toBe(0);
    const [job] = (JSON.parse(shown.stdout) as { jobs: { requestId: string; parameters: Record<string, string>; maskedParameters: string[] }[] }).jobs;
    expect(job!.requestId).toBe(requestId);
    expect(job!.parameters).toEqual({ email: EMAIL, token: '***', password: '***', comment: COMMENT });
    expect(job!.maskedParameters).toEqual(['token', 'password']);
  });

  it('leaves the output as it was without --reveal, and needs no key then', async () => {
    const text = await show([], { ENDPOINT_SERVICE_QUEUE_KEY: undefined });
    expect(text.code).toBe(0);
    expect(text.stdout).not.toContain('parameter');
    expect(text.stdout).not.toContain(EMAIL);
    const json = await show(['--format', 'json'], { ENDPOINT_SERVICE_QUEUE_KEY: undefined });
    expect(Object.keys((JSON.parse(json.stdout) as { jobs: Record<string, unknown>[] }).jobs[0]!)).not.toContain('parameters');
  });

  it('exits 2 without ENDPOINT_SERVICE_QUEUE_KEY, or with a key that does not open the job, and prints nothing', async () => {
    const none = await show(['--reveal'], { ENDPOINT_SERVICE_QUEUE_KEY: undefined });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/jobs show --reveal needs ENDPOINT_SERVICE_QUEUE_KEY set to the key serve and worker run with/);
    expect(none.stdout).toBe('');
    const other = await show(['--reveal'], { ENDPOINT_SERVICE_QUEUE_KEY: randomBytes(32).toString('base64') });
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/the parameters of job \S+ cannot be opened with ENDPOINT_SERVICE_QUEUE_KEY: .*sealed under another/);
    expect(other.stdout).toBe('');
  });
});
