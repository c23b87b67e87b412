// BullMQ's PostgreSQL backend (experimental), through the same code path as Redis: enqueue and a
// separate worker, sealing at rest, a worker killed mid-task and resumed from its checkpoint, a
// permanent failure repaired with `jobs retry`. Runs when ENDPOINT_SERVICE_TEST_POSTGRES_URL is set.
import pg from 'pg';
import { Queue, createPostgresBackend } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import { eventually, QUEUE_KEY, queueFixture, runCli, startWorker, uniqueQueueName, type RunningWorker } from '../helpers/queue.js';

const url = process.env.ENDPOINT_SERVICE_TEST_POSTGRES_URL || null;
if (url === null) console.warn('skipped: the PostgreSQL queue suite runs when ENDPOINT_SERVICE_TEST_POSTGRES_URL is set (such as postgres://postgres@127.0.0.1:5432/test)');
const name = uniqueQueueName('pg');

describe.skipIf(url === null)('the PostgreSQL backend', () => {
  let peer: HttpPeer;
  let smtp: SmtpPeer;
  let serve: RunningService;
  const workers: RunningWorker[] = [];
  let queue: Queue;
  let db: pg.Pool;
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let pickyFixed = false;
  const worker = (...args: string[]) => {
    const w = startWorker(queueFixture('durable'), url!, name, ['--smtp-url', smtp.url, '--queue-lock-duration', '2s', ...args], { PEER: peer.origin });
    workers.push(w);
    return w;
  };
  const state = (id: string) => queue.getJobState(id);

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/first', { status: 201, json: { id: 'C-PG-5521' } });
    peer.route('/slow', { status: 200, hold: () => held }, { status: 200 });
    peer.route('/fine', { status: 200 });
    peer.route('/picky', () => (pickyFixed ? { status: 200 } : { status: 400 }));
    smtp = await SmtpPeer.start();
    queue = new Queue(name, { connection: { connectionString: url!, migrate: true } } as never, createPostgresBackend as never);
    db = new pg.Pool({ connectionString: url!, max: 1 });
    serve = await startServe(queueFixture('durable'), ['--queue', url!, '--queue-name', name, '--no-queue-consume', '--smtp-url', smtp.url], { PEER: peer.origin, ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY });
  });
  afterAll(async () => {
    release();
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await serve?.stop();
    await queue?.obliterate({ force: true }).catch(() => {});
    await queue?.close();
    await db?.end();
    await peer?.close();
    await smtp?.close();
  });

  it('stores the run sealed, and a worker killed mid-task is resumed from its checkpoint by another', async () => {
    const EMAIL = 'pg.private@example.test';
    const response = await fetch(`${serve.url}/chain`, { method: 'POST', body: new URLSearchParams({ email: EMAIL }) });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const [job] = await queue.getJobs(['waiting']);
    expect(job!.data.requestId).toBe(requestId);
    expect(peer.requests.length).toBe(0);

    const first = worker();
    await peer.waitForRequests(1, '/slow');
    await eventually(async () => ((await queue.getJob(job!.id!))?.progress as { tasks?: Record<string, { outcome: string }> })?.tasks?.first?.outcome === 'succeeded' || undefined, 'the checkpoint of "first"');
    const rows = await db.query('SELECT row_to_json(j)::text AS row FROM bullmq.job j WHERE queue = $1', [name]);
    const stored = rows.rows.map((r: { row: string }) => r.row).join('\n');
    expect(stored).toContain(requestId);
    for (const secret of [EMAIL, 'pg.private', 'C-PG-5521']) expect(stored).not.toContain(secret);
    first.child.kill('SIGKILL');
    await first.exited;

    worker();
    await eventually(async () => ((await state(job!.id!)) === 'completed' ? true : undefined), 'the job to complete on the second worker', 40_000);
    expect(peer.requestsTo('/first').length).toBe(1);
    const slow = peer.requestsTo('/slow');
    expect(slow.length).toBe(2);
    expect(new Set(slow.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    expect(slow[1]!.body).toBe('customer=C-PG-5521');
    expect(smtp.messages.length).toBe(1);
  });

  it('puts a 400 in the failed set; jobs retry runs only that task once the peer is fixed', async () => {
    const response = await fetch(`${serve.url}/two`, { method: 'POST' });
    const requestId = response.headers.get('x-request-id')!;
    await eventually(async () => ((await queue.getJobs(['failed'])).length === 1 ? true : undefined), 'the job to fail');
    const jobs = (...args: string[]) => runCli(['jobs', ...args, '--queue', url!, '--queue-name', name]);
    const listed = JSON.parse((await jobs('list', '--state', 'failed', '--format', 'json')).stdout) as { jobs: { requestId: string; failedTask: string }[] };
    expect(listed.jobs).toEqual([expect.objectContaining({ requestId, failedTask: 'picky' })]);
    const [failed] = await queue.getJobs(['failed']);
    pickyFixed = true;
    expect((await jobs('retry', requestId)).code).toBe(0);
    await eventually(async () => ((await state(failed!.id!)) === 'completed' ? true : undefined), 'the retried job to complete');
    expect(peer.requestsTo('/picky').length).toBe(2);
    expect(peer.requestsTo('/fine').length).toBe(1);
  });
});
