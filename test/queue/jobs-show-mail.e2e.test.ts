// What `jobs show` says of a job's mail: every task's final outcome, the last one's (the Email
// task, delivered last) included, and each message's marker: sent, or not sent when the server
// refused it (a 550 is certain, not a delivery of unknown outcome). A job that failed, whose
// upstream was fixed and that `jobs retry` completed, shows what the retry did, not the failure.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableRig } from '../helpers/durable-rig.js';
import { eventually, queueBackends, runCli, runsOn, stopSpawnedRedis, uniqueQueueName } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);
const name = uniqueQueueName('show-mail');
const OFFICE = 'office@example.test';

interface Shown {
  jobs: {
    state: string;
    error: string | null;
    failedTask: string | null;
    code: string | null;
    tasks: Record<string, { outcome: string; code?: string }>;
    mail: Record<string, Record<string, { state: string; messageId: string }>>;
    deliveryUnknown: unknown[];
  }[];
}

describe.each(backends)('jobs show and the mail of a job on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  const rig = new DurableRig(backend, name);
  // The second call's upstream: broken (400, permanent) until a test fixes it.
  let slowBroken = false;
  const jobs = (...args: string[]) => runCli(['jobs', ...args, '--queue', url, '--queue-name', name]);
  const show = async (requestId: string) => {
    const text = await jobs('show', requestId);
    expect(text.code).toBe(0);
    const json = await jobs('show', requestId, '--format', 'json');
    expect(json.code).toBe(0);
    return { text: text.stdout, job: (JSON.parse(json.stdout) as Shown).jobs[0]! };
  };
  const post = async () => {
    const response = await fetch(`${rig.serve.url}/chain`, { method: 'POST', body: new URLSearchParams({ email: 'd@example.test' }) });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const job = (await rig.store.queue.getJobs(['waiting', 'active', 'delayed', 'completed', 'failed'])).find((j) => j.data.requestId === requestId)!;
    return { requestId, jobId: job.id! };
  };
  const state = (jobId: string, wanted: string) =>
    eventually(async () => ((await rig.store.queue.getJobState(jobId)) === wanted ? true : undefined), `the job to be ${wanted}`, 40_000);

  beforeAll(async () => {
    await rig.start(
      (peer) => {
        peer.route('/first', { status: 201, json: { id: 'C-5' } });
        peer.route('/slow', () => (slowBroken ? { status: 400, body: 'no' } : { status: 200 }));
      },
      {},
      ['--queue-backoff', '10ms'],
    );
    rig.worker([]);
  });
  afterAll(() => rig.close());

  it('shows the Email task and its mail marker for a job that succeeded at once', async () => {
    const { requestId, jobId } = await post();
    await state(jobId, 'completed');
    expect(rig.smtp.messages.length).toBe(1);
    const messageId = rig.smtp.messages[0]!.parsed.messageId!;

    const { text, job } = await show(requestId);
    expect(text).toContain('  task notify: succeeded\n');
    expect(text).toContain(`  mail notify, message 1: sent, Message-ID ${messageId}\n`);
    expect(job.tasks.notify).toMatchObject({ outcome: 'succeeded' });
    expect(job.mail.notify!['0']).toMatchObject({ state: 'sent', messageId });
    expect(job.deliveryUnknown).toEqual([]);
    expect(job).toMatchObject({ error: null, failedTask: null, code: null });
  });

  it('shows the mail sent by jobs retry once the upstream was fixed, and no error on the completed job', async () => {
    slowBroken = true;
    const before = rig.smtp.messages.length;
    const { requestId, jobId } = await post();
    await state(jobId, 'failed');
    const failed = await show(requestId);
    expect(failed.text).toContain('  task second: failed (http-status)\n');
    expect(failed.job.tasks.notify).toMatchObject({ outcome: 'not-started' });
    expect(rig.smtp.messages.length).toBe(before);

    slowBroken = false;
    expect((await jobs('retry', requestId)).code).toBe(0);
    await state(jobId, 'completed');
    expect(rig.smtp.messages.length).toBe(before + 1);
    const messageId = rig.smtp.messages[before]!.parsed.messageId!;

    const { text, job } = await show(requestId);
    expect(text).toContain('  task second: succeeded\n');
    expect(text).toContain('  task notify: succeeded\n');
    expect(text).not.toContain('not-started');
    expect(text).toContain(`  mail notify, message 1: sent, Message-ID ${messageId}\n`);
    expect(job).toMatchObject({ state: 'completed', error: null, failedTask: null, code: null });
    expect(job.mail.notify!['0']).toMatchObject({ state: 'sent', messageId });
    // The failure is history, in the attempt lines.
    expect(text).toContain('failed for good: task "second" failed (http-status)');
  });

  it('shows a mail the server refused with 550 as not sent, not as delivery-unknown, and sends it on jobs retry', async () => {
    rig.smtp.refused.add(OFFICE);
    const before = rig.smtp.messages.length;
    const { requestId, jobId } = await post();
    await state(jobId, 'failed');
    expect(rig.smtp.recipientsTried.filter((r) => r === OFFICE).length).toBe(before + 1);
    expect(rig.smtp.messages.length).toBe(before);

    const failed = await show(requestId);
    expect(failed.text).toContain('  task notify: failed (smtp-rejected)\n');
    expect(failed.text).toMatch(/ {2}mail notify, message 1: not sent, Message-ID <[^>]+>\n/);
    expect(failed.text).not.toContain('delivery-unknown');
    expect(failed.job.mail.notify!['0']).toMatchObject({ state: 'not-sent' });
    expect(failed.job.deliveryUnknown).toEqual([]);

    // A message certainly not sent is sent by the next run, once the mailbox exists.
    rig.smtp.refused.delete(OFFICE);
    expect((await jobs('retry', requestId)).code).toBe(0);
    await state(jobId, 'completed');
    expect(rig.smtp.messages.length).toBe(before + 1);
    const { text } = await show(requestId);
    expect(text).toContain('  task notify: succeeded\n');
    expect(text).toContain('  mail notify, message 1: sent, Message-ID');
  });

  it('sends a mail the server deferred (451) on the queue’s next attempt, once, and shows it sent', async () => {
    rig.smtp.deferRecipients = 1;
    const before = rig.smtp.messages.length;
    const calls = { first: rig.peer.requestsTo('/first').length, second: rig.peer.requestsTo('/slow').length };
    const { requestId, jobId } = await post();
    await state(jobId, 'completed');
    expect(rig.smtp.messages.length).toBe(before + 1);
    // The API calls that succeeded before the mail failed are not made again (no duplicate contact).
    expect(rig.peer.requestsTo('/first').length).toBe(calls.first + 1);
    expect(rig.peer.requestsTo('/slow').length).toBe(calls.second + 1);
    const { text, job } = await show(requestId);
    expect(text).toContain('attempt 1: retry scheduled: task "notify" failed (smtp-rejected)');
    expect(text).toContain('  task notify: succeeded\n');
    expect(text).toContain('  mail notify, message 1: sent, Message-ID');
    expect(text).not.toContain('delivery-unknown');
    expect(job.deliveryUnknown).toEqual([]);
  });
});
