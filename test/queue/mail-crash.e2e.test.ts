// A worker killed during an SMTP transaction (the server has the message, the worker never heard
// its 250): the message's outcome is unknown. By default it is not sent again and is reported
// delivery-unknown; with --email-redelivery at-least-once it is resent with the same Message-ID.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableRig } from '../helpers/durable-rig.js';
import { eventually, queueBackends, runCli, runsOn, stopSpawnedRedis, uniqueQueueName } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);
const name = uniqueQueueName('mail');

describe.each(backends)('a worker killed while a mail is being sent on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  const rig = new DurableRig(backend, name);
  // The server's 250 waits for this gate; open, unless a test closes it.
  let gate: Promise<void> = Promise.resolve();
  let release: () => void = () => {};
  const worker = (...args: string[]) => rig.worker(['--queue-lock-duration', '1s', ...args]);

  /** Enqueues one run, lets a worker reach the SMTP data of its mail, kills it, then lets the server record the message. */
  const crashDuringMail = async () => {
    gate = new Promise<void>((resolve) => (release = resolve));
    const response = await fetch(`${rig.serve.url}/chain`, { method: 'POST', body: new URLSearchParams({ email: 'c@example.test' }) });
    const requestId = response.headers.get('x-request-id')!;
    const job = (await rig.store.queue.getJobs(['waiting'])).find((j) => j.data.requestId === requestId)!;
    const doomed = worker();
    await rig.smtp.waitForData(rig.smtp.dataArrived + 1);
    const progress = (await rig.store.queue.getJob(job.id!))!.progress as { mail: Record<string, Record<string, { state: string }>> };
    expect(progress.mail.notify!['0']!.state).toBe('sending');
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    release();
    gate = Promise.resolve();
    return { requestId, jobId: job.id! };
  };

  beforeAll(() =>
    rig.start(
      (peer) => {
        peer.route('/first', { status: 201, json: { id: 'C-3' } });
        peer.route('/slow', { status: 200 });
      },
      { holdData: () => gate },
    ),
  );
  afterAll(async () => {
    release();
    await rig.close();
  });

  it('does not send it again by default, and reports it delivery-unknown', async () => {
    const { requestId, jobId } = await crashDuringMail();
    await rig.smtp.waitForMessages(1);
    const next = worker();
    await eventually(async () => ((await rig.store.queue.getJobState(jobId)) === 'completed' ? true : undefined), 'the job to complete', 40_000);
    expect(rig.smtp.messages.length).toBe(1);
    expect(rig.smtp.dataArrived).toBe(1);
    expect(await next.waitForLog((l) => String(l.msg).startsWith('delivery-unknown'))).toMatchObject({ requestId, jobId, task: 'notify', message: 1 });
    const metrics = await (await fetch(`${await next.origin}/_metrics`)).text();
    expect(metrics).toMatch(/endpoint_service_email_delivery_unknown_total\{endpoint="chain",task="notify"\} 1/);
    const shown = await runCli(['jobs', 'show', requestId, '--queue', url, '--queue-name', name]);
    expect(shown.stdout).toMatch(/delivery-unknown: task notify, message 1, Message-ID <[0-9a-f]{40}@example\.test>/);
    await next.stop();
  });

  it('resends it with the same Message-ID under --email-redelivery at-least-once', async () => {
    const before = rig.smtp.messages.length;
    const { jobId } = await crashDuringMail();
    await rig.smtp.waitForMessages(before + 1);
    worker('--email-redelivery', 'at-least-once');
    await eventually(async () => ((await rig.store.queue.getJobState(jobId)) === 'completed' ? true : undefined), 'the job to complete', 40_000);
    const sent = rig.smtp.messages.slice(before);
    expect(sent.length).toBe(2);
    expect(sent[0]!.parsed.messageId).toBe(sent[1]!.parsed.messageId);
  });
});
