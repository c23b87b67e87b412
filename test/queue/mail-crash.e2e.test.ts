// A worker killed during an SMTP transaction (the server has the message, the worker never heard
// its 250): the message's outcome is unknown. By default it is not sent again and is reported
// delivery-unknown; with --email-redelivery at-least-once it is resent with the same Message-ID.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import { eventually, inspect, QUEUE_KEY, queueBackends, queueFixture, runCli, runsOn, startWorker, stopSpawnedRedis, uniqueQueueName, type RunningWorker, type StoreInspector } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);
const name = uniqueQueueName('mail');

describe.each(backends)('a worker killed while a mail is being sent on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  let peer: HttpPeer;
  let smtp: SmtpPeer;
  let serve: RunningService;
  const workers: RunningWorker[] = [];
  let store: StoreInspector;
  // The server's 250 waits for this gate; open, unless a test closes it.
  let gate: Promise<void> = Promise.resolve();
  let release: () => void = () => {};
  const worker = (...args: string[]) => {
    const w = startWorker(queueFixture('durable'), url, name, ['--smtp-url', smtp.url, '--queue-lock-duration', '1s', ...args], { PEER: peer.origin });
    workers.push(w);
    return w;
  };

  /** Enqueues one run, lets a worker reach the SMTP data of its mail, kills it, then lets the server record the message. */
  const crashDuringMail = async () => {
    gate = new Promise<void>((resolve) => (release = resolve));
    const response = await fetch(`${serve.url}/chain`, { method: 'POST', body: new URLSearchParams({ email: 'c@example.test' }) });
    const requestId = response.headers.get('x-request-id')!;
    const job = (await store.queue.getJobs(['waiting'])).find((j) => j.data.requestId === requestId)!;
    const doomed = worker();
    await smtp.waitForData(smtp.dataArrived + 1);
    const progress = (await store.queue.getJob(job.id!))!.progress as { mail: Record<string, Record<string, { state: string }>> };
    expect(progress.mail.notify!['0']!.state).toBe('sending');
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    release();
    gate = Promise.resolve();
    return { requestId, jobId: job.id! };
  };

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/first', { status: 201, json: { id: 'C-3' } });
    peer.route('/slow', { status: 200 });
    smtp = await SmtpPeer.start({ holdData: () => gate });
    store = inspect(backend, name);
    serve = await startServe(queueFixture('durable'), ['--queue', url, '--queue-name', name, '--no-queue-consume', '--smtp-url', smtp.url], { PEER: peer.origin, ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY });
  });
  afterAll(async () => {
    release();
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await serve?.stop();
    await peer?.close();
    await smtp?.close();
    await store?.close();
  });

  it('does not send it again by default, and reports it delivery-unknown', async () => {
    const { requestId, jobId } = await crashDuringMail();
    await smtp.waitForMessages(1);
    const next = worker();
    await eventually(async () => ((await store.queue.getJobState(jobId)) === 'completed' ? true : undefined), 'the job to complete', 40_000);
    expect(smtp.messages.length).toBe(1);
    expect(smtp.dataArrived).toBe(1);
    expect(await next.waitForLog((l) => String(l.msg).startsWith('delivery-unknown'))).toMatchObject({ requestId, jobId, task: 'notify', message: 1 });
    const metrics = await (await fetch(`${await next.origin}/_metrics`)).text();
    expect(metrics).toMatch(/endpoint_service_email_delivery_unknown_total\{endpoint="chain",task="notify"\} 1/);
    const shown = await runCli(['jobs', 'show', requestId, '--queue', url, '--queue-name', name]);
    expect(shown.stdout).toMatch(/delivery-unknown: task notify, message 1, Message-ID <[0-9a-f]{40}@example\.test>/);
    await next.stop();
  });

  it('resends it with the same Message-ID under --email-redelivery at-least-once', async () => {
    const before = smtp.messages.length;
    const { jobId } = await crashDuringMail();
    await smtp.waitForMessages(before + 1);
    worker('--email-redelivery', 'at-least-once');
    await eventually(async () => ((await store.queue.getJobState(jobId)) === 'completed' ? true : undefined), 'the job to complete', 40_000);
    const sent = smtp.messages.slice(before);
    expect(sent.length).toBe(2);
    expect(sent[0]!.parsed.messageId).toBe(sent[1]!.parsed.messageId);
  });
});
