// The delivery log's side of serve (docs/deliveries.md): every request routed to an endpoint
// becomes one record when its response closes, however it ended (answered, refused, timed out,
// the client gone). That end is one place, HttpService.responseClosed; what it cannot see
// there (a problem's detail, the runtime's classification, a task's outcome, a queue job) is
// noted on the response as it happens. Task outcomes after the answer (a background run) are
// written as updates of the record.

import type { IncomingMessage } from 'node:http';
import { isoTime } from '../../iso-time.js';
import type { Endpoint } from '../../compiler/ast.js';
import type { DeliveryLog } from '../../deliveries/log.js';
import type { CapturedRequest } from '../../deliveries/log-entry.js';
import type { DeliveryRecord, TaskRecord, TaskState, Verdict } from '../../deliveries/record.js';
import { withoutHeader } from '../../deliveries/sealed-request.js';
import type { PipelineResult } from '../../runtime/pipeline.js';
import type { TaskOutcome, TaskOutcomeEvent } from '../../runtime/observer.js';
import type { TrackedResponse } from '../http-server.js';
import { OpenDelivery } from './open-delivery.js';
import { REPLAY_HEADER } from './replay-gate.js';

const STATE: Readonly<Record<TaskOutcome, TaskState>> = {
  succeeded: 'succeeded',
  failed: 'failed',
  'ignored-failure': 'failed',
  skipped: 'skipped',
  'not-started': 'not-started',
};

export function taskRecord(event: TaskOutcomeEvent): TaskRecord {
  return {
    id: event.taskId,
    kind: event.kind,
    state: STATE[event.outcome],
    attempts: event.attempts,
    status: event.status ?? null,
    // The code and the task: the error text of a failure may quote an upstream's answer.
    error: event.code !== undefined ? `task "${event.taskId}" failed: ${event.code}` : event.outcome === 'failed' ? `task "${event.taskId}" failed` : null,
    durationMs: Math.round(event.durationMs * 10) / 10,
  };
}

export class DeliveryRecording {
  /** Deliveries whose response has not closed, by request id: where their task outcomes go. */
  private readonly open = new Map<string, OpenDelivery>();

  constructor(
    private readonly log: DeliveryLog,
    /** --deliveries-max-body: a larger body is not kept (the record is). */
    private readonly maxBodyBytes: number,
    private readonly clientIp: (request: IncomingMessage) => string,
  ) {}

  begin(response: TrackedResponse, replayOf: string | null): void {
    const open = new OpenDelivery(Date.now(), replayOf);
    response.delivery = open;
    // Only a delivery with tasks hears of them (or of a queued job) by its request id.
    if (response.endpoint!.tasks.length > 0) this.open.set(response.requestId, open);
  }

  /** Keeps the body's bytes as they arrive, beside the reader that parses them (as ../body/digest.ts hashes them). */
  captureBody(request: IncomingMessage, open: OpenDelivery): void {
    if (!this.log.keepsRequests) return;
    const chunks: Buffer[] = [];
    open.body = chunks;
    const limit = this.maxBodyBytes;
    const onData = (chunk: Buffer) => {
      open.bodyBytes += chunk.length;
      if (open.bodyBytes > limit) {
        request.off('data', onData);
        open.body = null;
      } else chunks.push(chunk);
    };
    request.on('data', onData);
  }

  decided(open: OpenDelivery, result: PipelineResult): void {
    if (result.classified !== undefined) open.classified = result.classified;
    if (result.replayOf !== undefined) open.replayOf = result.replayOf;
    if (result.deduplicationKey !== undefined) open.deduplicationKey = result.deduplicationKey;
  }

  queued(requestId: string, job: string): void {
    const open = this.open.get(requestId);
    if (open !== undefined) open.job = job;
  }

  taskFinished(event: TaskOutcomeEvent): void {
    const task = taskRecord(event);
    const open = this.open.get(event.requestId);
    if (open !== undefined) (open.tasks ??= []).push(task);
    else this.log.add({ kind: 'task', delivery: event.requestId, task });
  }

  closed(response: TrackedResponse, request: IncomingMessage, durationMs: number): void {
    const open = response.delivery;
    if (open === null) return;
    const endpoint = response.endpoint!;
    if (endpoint.tasks.length > 0) this.open.delete(response.requestId);
    const status = response.statusCode;
    const verdict = verdictOf(open, status, response.writableFinished);
    const kept = this.keptRequest(request, open);
    const record: DeliveryRecord = {
      id: response.requestId,
      receivedAt: isoTime(open.receivedAt),
      endpoint: endpoint.name,
      method: response.method,
      path: response.path,
      client: this.clientIp(request),
      verdict,
      status: response.writableFinished ? status : 0,
      reason: open.reason ?? (response.writableFinished ? null : 'the client went away before the answer'),
      durationMs: Math.round(durationMs * 10) / 10,
      deduplicationKey: open.deduplicationKey,
      replayOf: open.replayOf,
      job: open.job,
      tasks: tasksOf(endpoint, open, verdict),
      request: kept !== null ? 'sealed' : 'not-kept',
    };
    this.log.add({ kind: 'delivery', record, request: kept });
  }

  /** What the writer thread seals; sealing it there keeps the cost of the cipher off the request path. */
  private keptRequest(request: IncomingMessage, open: OpenDelivery): CapturedRequest | null {
    if (!this.log.keepsRequests) return null;
    const method = request.method ?? 'GET';
    const headers = request.headers;
    // A body refused before it was read whole (too large, timed out) cannot be sent again as it was.
    const hasBody = headers['content-length'] !== undefined && headers['content-length'] !== '0';
    const chunked = headers['transfer-encoding'] !== undefined;
    let body: readonly Buffer[] | null = null;
    if (hasBody || chunked) {
      if (open.body === null || !request.complete) return null;
      body = open.body;
    }
    // A replay's mark is the service's own, not part of the request it resends.
    const rawHeaders = headers[REPLAY_HEADER] === undefined ? request.rawHeaders : withoutHeader(request.rawHeaders, REPLAY_HEADER);
    return { method, url: request.url ?? '/', rawHeaders, body };
  }
}

function verdictOf(open: OpenDelivery, status: number, answered: boolean): Verdict {
  if (open.classified !== null) return open.classified;
  if (!answered) return 'failed';
  if (status === 429) return 'limited';
  if (status >= 500) return 'failed';
  if (status >= 400) return 'refused';
  return 'accepted';
}

/** What ran or will run: the outcomes reported so far, and an accepted delivery's other tasks as pending. */
function tasksOf(endpoint: Endpoint, open: OpenDelivery, verdict: Verdict): readonly TaskRecord[] {
  const reported = open.tasks ?? [];
  if (verdict !== 'accepted' || endpoint.tasks.length === reported.length) return reported;
  const seen = new Set(reported.map((t) => t.id));
  const pending: TaskRecord[] = endpoint.tasks
    .filter((t) => !seen.has(t.id))
    .map((t) => ({ id: t.id, kind: t.kind, state: 'pending', attempts: 0, status: null, error: null, durationMs: null }));
  return [...reported, ...pending];
}
