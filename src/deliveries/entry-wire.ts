// How a batch of log entries crosses to the writer thread: one JSON text of arrays, and the
// bodies beside it. A thread message copies an object graph field by field on the thread that
// sends it, the one that answers requests; a JSON text of arrays is cheaper to make there, and a
// body crosses as its own ArrayBuffer, moved rather than copied.

import type { CapturedRequest, LogEntry } from './log-entry.js';
import type { DeliveryRecord, TaskRecord, Verdict } from './record.js';

export interface WireBatch {
  readonly text: string;
  readonly bodies: readonly Uint8Array[];
}

type WireRequest = [method: string, url: string, rawHeaders: readonly string[], body: number];
type WireDelivery = [
  kind: 0,
  id: string,
  receivedAt: string,
  endpoint: string,
  method: string,
  path: string,
  client: string,
  verdict: Verdict,
  status: number,
  reason: string | null,
  durationMs: number,
  deduplicationKey: string | null,
  replayOf: string | null,
  job: string | null,
  tasks: readonly TaskRecord[],
  request: DeliveryRecord['request'],
  captured: WireRequest | null,
];
type WireTask = [kind: 1, delivery: string, task: TaskRecord];

export function encodeBatch(entries: readonly LogEntry[]): WireBatch {
  const bodies: Uint8Array[] = [];
  const rows = entries.map((entry): WireDelivery | WireTask => {
    if (entry.kind === 'task') return [1, entry.delivery, entry.task];
    const r = entry.record;
    const c = entry.request;
    let captured: WireRequest | null = null;
    if (c !== null) {
      if (c.body !== null) bodies.push(c.body);
      captured = [c.method, c.url, c.rawHeaders, c.body === null ? -1 : bodies.length - 1];
    }
    return [
      0,
      r.id,
      r.receivedAt,
      r.endpoint,
      r.method,
      r.path,
      r.client,
      r.verdict,
      r.status,
      r.reason,
      r.durationMs,
      r.deduplicationKey,
      r.replayOf,
      r.job,
      r.tasks,
      r.request,
      captured,
    ];
  });
  return { text: JSON.stringify(rows), bodies };
}

export function decodeBatch(batch: WireBatch): LogEntry[] {
  const rows = JSON.parse(batch.text) as (WireDelivery | WireTask)[];
  return rows.map((row): LogEntry => {
    if (row[0] === 1) return { kind: 'task', delivery: row[1], task: row[2] };
    const [, id, receivedAt, endpoint, method, path, client, verdict, status, reason, durationMs, deduplicationKey, replayOf, job, tasks, request, c] = row;
    const record: DeliveryRecord = {
      id,
      receivedAt,
      endpoint,
      method,
      path,
      client,
      verdict,
      status,
      reason,
      durationMs,
      deduplicationKey,
      replayOf,
      job,
      tasks,
      request,
    };
    const captured: CapturedRequest | null = c === null ? null : { method: c[0], url: c[1], rawHeaders: c[2], body: c[3] === -1 ? null : batch.bodies[c[3]]! };
    return { kind: 'delivery', record, request: captured };
  });
}

/** The bodies' memory, to move with the message: each body owns its ArrayBuffer (delivery-recording.ts). */
export function transferable(batch: WireBatch): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const body of batch.bodies) if (body.byteOffset === 0 && body.byteLength === body.buffer.byteLength) buffers.add(body.buffer as ArrayBuffer);
  return [...buffers];
}
