// `endpoint-service jobs list|show|retry|discard --queue URL`: the failed set (the dead letters)
// and its remedies. Exit codes, as `deliveries` has them: 0 done, 2 usage (and `show --reveal`
// without a key that opens the job, or a store that refuses the URL's password or database),
// 3 nothing to act on (no such job, or none of them failed for `retry`), 4 the store cannot be
// reached.

import type { Command } from 'commander';
import { usageOf } from './option-parsers.js';
import type { JobsAdmin, JobStateName, JobSummary } from '../queue/admin.js';
import type { MailRecord } from '../queue/job.js';
import type { RevealedParameters } from '../queue/reveal.js';
import type { QueueKey } from '../queue/seal.js';
import type { ExitCode } from './action.js';
import type { QueueFlags } from './queue-options.js';
import { resolveQueueLocation } from './queue-settings.js';
import { resolveDeliveryStore, type DeliveryStoreFlags } from './deliveries-options.js';
import { describeError } from '../errors.js';
import { DEFAULT_NAMESPACE, DEFAULT_STATE_DIR } from '../deliveries/settings.js';

const NOT_FOUND: ExitCode = 3;
const UNREACHABLE: ExitCode = 4;

export interface JobsFlags extends Pick<QueueFlags, 'queue' | 'queueName'>, Partial<DeliveryStoreFlags> {
  state?: JobStateName;
  format?: 'text' | 'json';
  limit?: number;
  allFailed?: boolean;
  reveal?: boolean;
}

export async function listJobs(flags: JobsFlags, command: Command): Promise<ExitCode> {
  return withAdmin(flags, command, (admin) => list(admin, flags));
}

export async function showJob(id: string, flags: JobsFlags, command: Command): Promise<ExitCode> {
  return withAdmin(
    flags,
    command,
    (admin, keys, queueUrl) => show(admin, id, flags, keys, () => replayedRequest(id, flags, queueUrl, command)),
    flags.reveal === true ? 'jobs show --reveal' : null,
  );
}

export async function retryJobs(id: string | undefined, flags: JobsFlags, command: Command): Promise<ExitCode> {
  if ((id === undefined) === (flags.allFailed !== true)) usageOf(command)('give a request id or --all-failed');
  return withAdmin(flags, command, (admin) => retry(admin, id, flags));
}

export async function discardJobs(id: string, flags: JobsFlags, command: Command): Promise<ExitCode> {
  return withAdmin(flags, command, (admin) => discard(admin, id));
}

/** `keyFor`: the command that needs ENDPOINT_SERVICE_QUEUE_KEY (a usage error without it), or null. */
async function withAdmin(
  flags: JobsFlags,
  command: Command,
  run: (admin: JobsAdmin, keys: readonly QueueKey[], queueUrl: string) => Promise<ExitCode>,
  keyFor: string | null = null,
): Promise<ExitCode> {
  const usage = usageOf(command);
  const location = resolveQueueLocation(flags, usage, false);
  if (location === null) return usage('jobs needs --queue URL (or ENDPOINT_SERVICE_QUEUE_URL)');
  // A new key would open nothing: the one the jobs were sealed with is needed.
  if (keyFor !== null && location.keys.length === 0)
    usage(
      `${keyFor} needs ENDPOINT_SERVICE_QUEUE_KEY set to the key serve and worker run with (and ENDPOINT_SERVICE_QUEUE_KEY_PREVIOUS for jobs sealed before a key change)`,
    );
  // A store that answers but refuses the URL would be read on another database, or not at all.
  const { probeStore } = await import('../queue/store-refusal.js');
  const probe = await probeStore(location.url, location.backend);
  if (probe.kind === 'refused') usage(`--queue: ${probe.reason}`);
  const unreachable = (reason: string): ExitCode => {
    process.stderr.write(`endpoint-service: the queue store cannot be reached: ${reason}\n`);
    return UNREACHABLE;
  };
  if (probe.kind === 'unreachable') return unreachable(probe.reason);
  const { JobsAdmin } = await import('../queue/admin.js');
  const { describeStoreFailure } = await import('../queue/store-errors.js');
  let admin: JobsAdmin;
  try {
    admin = await JobsAdmin.open({ url: location.url, backend: location.backend, name: flags.queueName });
  } catch (error) {
    return unreachable(describeStoreFailure(error, location.url));
  }
  try {
    return await run(admin, location.keys, location.url);
  } catch (error) {
    process.stderr.write(`endpoint-service: the queue store cannot be read: ${describeError(error)}\n`);
    return UNREACHABLE;
  } finally {
    await admin.close();
  }
}

/** A mail marker's state as `jobs show` prints it; null: on a delivery-unknown line of its own. */
const MAIL_SHOWN: Readonly<Record<MailRecord['state'], string | null>> = { sent: 'sent', 'not-sent': 'not sent', sending: null, unknown: null };

function line(job: JobSummary): string {
  const failed =
    job.failedTask !== null ? `  task "${job.failedTask}" failed${job.code !== null ? ` (${job.code})` : ''}` : job.error !== null ? `  ${job.error}` : '';
  return `${job.requestId}  ${job.endpoint}  ${job.state}  attempts ${job.attempts}  enqueued ${job.enqueuedAt}${failed}\n`;
}

async function list(admin: JobsAdmin, flags: JobsFlags): Promise<ExitCode> {
  const jobs = await admin.list(flags.state ?? 'failed', flags.limit ?? 50);
  if (flags.format === 'json') process.stdout.write(`${JSON.stringify({ state: flags.state, jobs }, null, 2)}\n`);
  else if (jobs.length === 0) process.stdout.write(`no ${flags.state} jobs\n`);
  else for (const job of jobs) process.stdout.write(line(job));
  return 0;
}

/**
 * The request a replayed (deduplicated) answer repeated, from the delivery log: its record has
 * `replayOf` (docs/deliveries.md). Null when the log has no such delivery, or cannot be read:
 * the job is then simply not found.
 */
async function replayedRequest(id: string, flags: JobsFlags, queueUrl: string, command: Command): Promise<string | null> {
  const location = resolveDeliveryStore(
    { ...flags, stateDir: flags.stateDir ?? DEFAULT_STATE_DIR, deliveriesNamespace: flags.deliveriesNamespace ?? DEFAULT_NAMESPACE },
    queueUrl,
    usageOf(command),
  );
  if (location === null) return null;
  const { openDeliveryStore } = await import('../deliveries/open.js');
  try {
    const store = await openDeliveryStore(location, false);
    try {
      return (await store.get(id))?.record.replayOf ?? null;
    } finally {
      await store.close().catch(() => {});
    }
  } catch {
    return null;
  }
}

/** The jobs of `id`, or of the request whose deduplication record answered it (said in a line); null: none. */
async function jobsOf(
  admin: JobsAdmin,
  id: string,
  flags: JobsFlags,
  replayOf: () => Promise<string | null>,
): Promise<Awaited<ReturnType<JobsAdmin['find']>> | null> {
  const jobs = await admin.find(id);
  if (jobs.length > 0) return jobs;
  const original = await replayOf();
  const theirs = original !== null ? await admin.find(original) : [];
  if (theirs.length === 0) return null;
  // With --format json on stderr: stdout stays one JSON document, as for the original's own id.
  const note = `${id} was answered from the deduplication record of request ${original}: its job follows\n`;
  (flags.format === 'json' ? process.stderr : process.stdout).write(note);
  return theirs;
}

async function show(admin: JobsAdmin, id: string, flags: JobsFlags, keys: readonly QueueKey[], replayOf: () => Promise<string | null>): Promise<ExitCode> {
  const jobs = await jobsOf(admin, id, flags, replayOf);
  if (jobs === null) return notFound(id);
  const details = await Promise.all(jobs.map((job) => admin.detail(job)));
  // Every job is opened before anything is printed: with a key that opens none, nothing is.
  let revealed: (RevealedParameters & { readonly errors: Record<string, string> })[] | null = null;
  if (flags.reveal === true) {
    revealed = [];
    for (const job of jobs) {
      try {
        revealed.push({ ...admin.reveal(job, keys), errors: admin.revealErrors(job, keys) });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        process.stderr.write(
          `endpoint-service: the parameters of job ${job.id} cannot be opened with ENDPOINT_SERVICE_QUEUE_KEY: ${reason}. Set it to the key serve and worker run with (and ENDPOINT_SERVICE_QUEUE_KEY_PREVIOUS for jobs sealed before a key change)\n`,
        );
        return 2;
      }
    }
  }
  if (flags.format === 'json') {
    const documents = details.map((d, i) => {
      const shown = revealed?.[i];
      if (shown === undefined) return d;
      const tasks = Object.fromEntries(Object.entries(d.tasks).map(([id, t]) => [id, shown.errors[id] !== undefined ? { ...t, error: shown.errors[id] } : t]));
      return { ...d, tasks, parameters: shown.parameters, maskedParameters: shown.masked };
    });
    process.stdout.write(`${JSON.stringify({ jobs: documents }, null, 2)}\n`);
    return 0;
  }
  for (const [i, d] of details.entries()) {
    process.stdout.write(line(d));
    const shown = revealed?.[i];
    if (shown !== undefined) {
      if (!shown.secretsKnown) process.stdout.write('  parameters all masked: the job was queued before endpoint-service recorded which of them are secret\n');
      // Quoted as JSON: a value may hold line breaks or terminal escapes.
      for (const [name, value] of Object.entries(shown.parameters))
        process.stdout.write(`  parameter ${name}: ${shown.masked.includes(name) ? value : JSON.stringify(value)}\n`);
    }
    for (const [task, record] of Object.entries(d.tasks)) {
      // The text may hold values of the request (a path, a recipient): only revealed, quoted as JSON.
      const text = shown?.errors[task];
      process.stdout.write(
        `  task ${task}: ${record.outcome}${record.code !== undefined ? ` (${record.code})` : ''}${text !== undefined ? `: ${JSON.stringify(text)}` : ''}\n`,
      );
    }
    // The mail markers: what became of each message (the Message-ID finds it in the mail server's log).
    for (const [task, messages] of Object.entries(d.mail)) {
      for (const [index, record] of Object.entries(messages)) {
        const shown = MAIL_SHOWN[record.state];
        if (shown !== null) process.stdout.write(`  mail ${task}, message ${Number(index) + 1}: ${shown}, Message-ID ${record.messageId}\n`);
      }
    }
    for (const u of d.deliveryUnknown) process.stdout.write(`  delivery-unknown: task ${u.task}, message ${u.message}, Message-ID ${u.messageId}\n`);
    if (d.config !== null && d.config !== undefined) process.stdout.write(`  configuration changed since enqueue (${d.config.mismatch})\n`);
    for (const entry of d.log) process.stdout.write(`  log: ${entry}\n`);
  }
  return 0;
}

async function retry(admin: JobsAdmin, id: string | undefined, flags: JobsFlags): Promise<ExitCode> {
  const jobs = flags.allFailed === true ? await admin.failed() : await admin.find(id!);
  if (jobs.length === 0) return flags.allFailed === true ? (process.stdout.write('no failed jobs\n'), 0) : notFound(id!);
  let retried = 0;
  for (const job of jobs) {
    if ((await job.getState()) !== 'failed') {
      process.stderr.write(`endpoint-service: job ${job.id} is not failed; only failed jobs are retried\n`);
      continue;
    }
    await admin.retry(job);
    retried++;
  }
  process.stdout.write(`${retried} job${retried === 1 ? '' : 's'} retried\n`);
  return retried > 0 ? 0 : NOT_FOUND;
}

async function discard(admin: JobsAdmin, id: string): Promise<ExitCode> {
  const jobs = await admin.find(id);
  if (jobs.length === 0) return notFound(id);
  for (const job of jobs) await admin.discard(job);
  process.stdout.write(`${jobs.length} job${jobs.length === 1 ? '' : 's'} discarded\n`);
  return 0;
}

function notFound(id: string): ExitCode {
  process.stderr.write(`endpoint-service: no job for "${id}" in this queue\n`);
  return NOT_FOUND;
}
