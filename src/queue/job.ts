// The job model: one job per task run (a request and an endpoint; a forward makes two). What is
// stored in clear says what the job is and where it stands; what came from the request (bound
// parameters, system values, uploads an Email task attaches, the raw body a task forwards) and the intermediate values are
// sealed (seal.ts). Never stored: ${env:…} values, settings files, `hash`, expanded requests —
// the worker expands the tasks again with its own configuration and environment.

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { TaskOutcome } from '../runtime/observer.js';
import type { TaskErrorCode } from '../tasks/errors.js';
import type { SystemParameter } from '../template/types.js';
import { RequestUploads, type RawBody, type Upload } from '../upload.js';
import { seal, unseal, type QueueKey } from './seal.js';

/** job.data: written once, at enqueue. */
export interface QueuedRun {
  readonly v: 1;
  readonly endpoint: string;
  readonly requestId: string;
  /** endpointFingerprint() of the enqueuing configuration. */
  readonly fingerprint: string;
  readonly enqueuedAt: number;
  /** SealedRun, sealed with the job id as additional data. */
  readonly sealed: string;
  /**
   * The request's trace context, stored only by a process that traces (job-trace.ts). In clear:
   * it names a trace and holds nothing of the request. Optional, so jobs stored without it (by a
   * process without tracing, or before it existed) still run, and older workers ignore it.
   */
  readonly trace?: JobTrace;
}

/** W3C Trace Context, as the headers carry it. */
export interface JobTrace {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** Inside QueuedRun.sealed. */
export interface SealedRun {
  readonly parameters: readonly (readonly [string, string])[];
  readonly system: Record<SystemParameter, string>;
  readonly uploads?: readonly { readonly fieldName: string; readonly filename: string; readonly contentType: string; readonly content: string }[];
  /** The request body as received, base64, for a task that forwards it; absent when the endpoint does not keep it. */
  readonly body?: { readonly contentType: string; readonly content: string };
  /** The delivery id of a request to an endpoint with <deduplicate> (ExpansionScope.delivery); absent otherwise. */
  readonly delivery?: string;
  /** The parameters the queuing configuration keeps secret, masked by `jobs show --reveal` (reveal.ts); absent in jobs queued before it was recorded. */
  readonly secret?: readonly string[];
}

/**
 * The checkpoint, in job.progress: rewritten after each task outcome and around each mail
 * message; a run that succeeded completes its job with it as the return value instead of a last
 * write (jobRecord reads either).
 */
export interface RunProgress {
  readonly tasks: Record<string, TaskRecord>;
  /** Per Email task, per message index. */
  readonly mail: Record<string, Record<string, MailRecord>>;
  /** The intermediate values produced so far, sealed with `${jobId}#intermediate`. */
  sealedIntermediate?: string;
  /** Set when the run went on under a configuration other than the one it was enqueued under. */
  config?: { readonly fingerprint: string; readonly mismatch: 'current' | 'strict' };
  /** The stalls (a worker gone without handing the job back) already written to the job's history. */
  stalls?: number;
  /** Written by the producer that gave up on the job before any worker fetched it: nothing of it runs (fate.ts). */
  readonly void?: true;
}

export interface TaskRecord {
  readonly outcome: TaskOutcome;
  readonly attempts: number;
  /** Why the task failed, in clear: a code, which holds no value of the request. */
  readonly code?: TaskErrorCode;
  /**
   * The text of a failure or of why the task did not run, sealed with `${jobId}#task:${taskId}`:
   * it may hold values of the request (a path, a recipient). Opened only by `jobs show --reveal`.
   */
  readonly sealedError?: string;
  /** The same text in clear, as versions before it was sealed wrote it; shown only by `jobs show --reveal`. */
  readonly error?: string;
  readonly at: number;
}

export interface MailRecord {
  /**
   * sending: the SMTP transaction began; sent: the server accepted it; not-sent: the server
   * refused it or could not be reached, so it certainly was not sent (a later run sends it);
   * unknown: a crash left it sending and it was not resent.
   */
  readonly state: 'sending' | 'sent' | 'not-sent' | 'unknown';
  readonly messageId: string;
  readonly at: number;
}

/** Outcomes that need no new run when the job is taken up again. */
export const FINISHED_OUTCOMES: ReadonlySet<TaskOutcome> = new Set(['succeeded', 'skipped', 'ignored-failure']);

/**
 * `<request id>.<8 hex of the endpoint>`: a forward's target and source get distinct ids, and
 * enqueuing the same run twice stores it once. BullMQ refuses ids with ':' and integer ids.
 */
export function jobIdFor(requestId: string, endpoint: string): string {
  const safe = requestId.replace(/[^A-Za-z0-9_-]/g, '_');
  let hash = endpointHashes.get(endpoint);
  if (hash === undefined) {
    hash = createHash('sha256').update(endpoint).digest('hex').slice(0, 8);
    endpointHashes.set(endpoint, hash);
  }
  return `${safe}.${hash}`;
}

/** By endpoint name, once per name: an application has few. */
const endpointHashes = new Map<string, string>();

export function sealRun(keys: readonly QueueKey[], jobId: string, run: SealedRun): string {
  return seal(keys, JSON.stringify(run), jobId);
}

export function unsealRun(keys: readonly QueueKey[], jobId: string, sealed: string): SealedRun {
  return JSON.parse(unseal(keys, sealed, jobId)) as SealedRun;
}

/** The job's own copy of the uploads, read from memory or from the request's temporary files, which go with the request. */
export async function uploadsToJob(uploads: readonly Upload[]): Promise<NonNullable<SealedRun['uploads']>> {
  return Promise.all(
    uploads.map(async (u) => {
      const content = u.source.kind === 'buffer' ? u.source.content : await readFile(u.source.path);
      return { fieldName: u.fieldName, filename: u.filename, contentType: u.contentType, content: content.toString('base64') };
    }),
  );
}

export function uploadsFromJob(uploads: SealedRun['uploads']): Upload[] {
  return (uploads ?? []).map((u) => {
    const content = Buffer.from(u.content, 'base64');
    return { fieldName: u.fieldName, filename: u.filename, contentType: u.contentType, size: content.length, source: { kind: 'buffer', content } };
  });
}

/** The job's own copy of the raw body, read from memory or from the request's temporary file, which goes with the request. */
export async function bodyToJob(body: RawBody): Promise<NonNullable<SealedRun['body']>> {
  const content = body.source.kind === 'buffer' ? body.source.content : await readFile(body.source.path);
  return { contentType: body.contentType, content: content.toString('base64') };
}

/** What the run's tasks get of the request: the job's own copies, in memory, with nothing to remove when the run is over. */
export function requestUploadsFromJob(sealed: SealedRun): RequestUploads {
  // Most jobs carry neither: they share the one empty set of uploads.
  if (sealed.body === undefined && (sealed.uploads === undefined || sealed.uploads.length === 0)) return RequestUploads.NONE;
  let body: RawBody | null = null;
  if (sealed.body !== undefined) {
    const content = Buffer.from(sealed.body.content, 'base64');
    body = { contentType: sealed.body.contentType, size: content.length, source: { kind: 'buffer', content } };
  }
  return new RequestUploads(uploadsFromJob(sealed.uploads), () => {}, undefined, body);
}

/** A task's failure text, sealed for its job and task (TaskRecord.sealedError). */
export function sealTaskError(keys: readonly QueueKey[], jobId: string, taskId: string, text: string): string {
  return seal(keys, text, `${jobId}#task:${taskId}`);
}

/** The failure text of a task record: opened, or as an earlier version wrote it in clear; throws SealError when `keys` cannot open it. */
export function taskErrorText(keys: readonly QueueKey[], jobId: string, taskId: string, record: TaskRecord): string | undefined {
  if (record.sealedError !== undefined) return unseal(keys, record.sealedError, `${jobId}#task:${taskId}`);
  return record.error;
}

const INTERMEDIATE = '#intermediate';

export function sealIntermediate(keys: readonly QueueKey[], jobId: string, values: ReadonlyMap<string, string>): string {
  return seal(keys, JSON.stringify([...values]), jobId + INTERMEDIATE);
}

export function unsealIntermediate(keys: readonly QueueKey[], jobId: string, sealed: string | undefined): Map<string, string> {
  if (sealed === undefined) return new Map();
  return new Map(JSON.parse(unseal(keys, sealed, jobId + INTERMEDIATE)) as [string, string][]);
}

/**
 * The record of a job as `jobs` shows it: a completed job's is its return value (the worker
 * completes a run that succeeded with its record, in the same store write); every other job's,
 * and a job completed by an earlier version, is its progress.
 */
export function jobRecord(job: { readonly progress: unknown; readonly returnvalue: unknown }): RunProgress {
  return readProgress(isRecord(job.returnvalue) ? job.returnvalue : job.progress);
}

function isRecord(value: unknown): value is RunProgress {
  return typeof value === 'object' && value !== null && 'tasks' in value && 'mail' in value;
}

/** job.progress as written by this version, or an empty record (a new job, or someone else's number). */
export function readProgress(progress: unknown): RunProgress {
  if (isRecord(progress)) {
    const p = progress as RunProgress;
    return {
      tasks: { ...p.tasks },
      mail: Object.fromEntries(Object.entries(p.mail).map(([k, v]) => [k, { ...v }])),
      ...(p.sealedIntermediate !== undefined ? { sealedIntermediate: p.sealedIntermediate } : {}),
      ...(p.config !== undefined ? { config: p.config } : {}),
      ...(p.stalls !== undefined ? { stalls: p.stalls } : {}),
      ...(p.void === true ? { void: true as const } : {}),
    };
  }
  return { tasks: {}, mail: {} };
}
