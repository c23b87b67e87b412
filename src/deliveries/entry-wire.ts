// How a batch of log entries crosses to the writer thread: memory both threads share, made once,
// holding the bodies and then one JSON text of arrays. On the thread that answers requests, a
// thread message copies an object graph field by field, and each message is new memory on both
// sides: on machines where the kernel maps fresh pages slowly, that cost more than everything
// else the log does there (measured: a 130 KB message about 1 ms, a 20 KB body copied into a
// new buffer 15-70 µs, into the shared memory 2.5 µs). What does not fit goes in the message.

import type { CapturedRequest, LogEntry } from './log-entry.js';
import type { DeliveryRecord, TaskRecord, Verdict } from './record.js';

/** A batch as it crosses: its text in the shared memory at `text`, or in the message. */
export interface WireBatch {
  readonly text: string | { readonly at: number; readonly bytes: number };
  /** Bodies that did not fit in the shared memory. */
  readonly bodies: readonly Uint8Array[];
}

/** Where a body is: none, an index into WireBatch.bodies, or [offset, length] in the shared memory. */
type WireBody = null | number | readonly [number, number];
type WireRequest = [method: string, url: string, rawHeaders: readonly string[], body: WireBody];
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

/** Writes the batch's bodies and text into `shared` as far as they fit. */
export function encodeBatch(entries: readonly LogEntry[], shared: Buffer<SharedArrayBuffer>): WireBatch {
  const bodies: Uint8Array[] = [];
  let at = 0;
  const place = (chunks: readonly Uint8Array[] | null): WireBody => {
    if (chunks === null) return null;
    let length = 0;
    for (const chunk of chunks) length += chunk.byteLength;
    if (at + length > shared.length) {
      // Memory of its own (never a slice of node's pool), so that it moves with the message.
      const own = Buffer.allocUnsafeSlow(length);
      let to = 0;
      for (const chunk of chunks) {
        own.set(chunk, to);
        to += chunk.byteLength;
      }
      bodies.push(own);
      return bodies.length - 1;
    }
    const start = at;
    for (const chunk of chunks) {
      shared.set(chunk, at);
      at += chunk.byteLength;
    }
    return [start, length];
  };
  const rows = entries.map((entry): WireDelivery | WireTask => {
    if (entry.kind === 'task') return [1, entry.delivery, entry.task];
    const r = entry.record;
    const c = entry.request;
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
      c === null ? null : [c.method, c.url, c.rawHeaders, place(c.body)],
    ];
  });
  const text = JSON.stringify(rows);
  // Three bytes of UTF-8 at most per UTF-16 unit: a text that surely fits is not measured first.
  const room = shared.length - at;
  const fits = text.length * 3 <= room || Buffer.byteLength(text) <= room;
  return { text: fits ? { at, bytes: shared.write(text, at, 'utf8') } : text, bodies };
}

/**
 * The entries of a batch. Their bodies view the shared memory, which the next batch overwrites:
 * they are to be used (sealed) before the batch is answered.
 */
export function decodeBatch(batch: WireBatch, shared: Buffer<SharedArrayBuffer>): LogEntry[] {
  const text = typeof batch.text === 'string' ? batch.text : shared.toString('utf8', batch.text.at, batch.text.at + batch.text.bytes);
  const rows = JSON.parse(text) as (WireDelivery | WireTask)[];
  const body = (where: WireBody): Uint8Array[] | null =>
    where === null ? null : typeof where === 'number' ? [batch.bodies[where]!] : [shared.subarray(where[0], where[0] + where[1])];
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
    const captured: CapturedRequest | null = c === null ? null : { method: c[0], url: c[1], rawHeaders: c[2], body: body(c[3]) };
    return { kind: 'delivery', record, request: captured };
  });
}

/** The memory of the bodies that go in the message, moved rather than copied. */
export function transferable(batch: WireBatch): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const body of batch.bodies) if (body.byteOffset === 0 && body.byteLength === body.buffer.byteLength) buffers.add(body.buffer as ArrayBuffer);
  return [...buffers];
}
