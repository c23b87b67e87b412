// Where the log's batches are sealed and written. In a thread of its own for serve (the writer
// thread, writer-thread.ts): sealing and a store's writes are CPU and, for SQLite, blocking I/O
// (a commit, a WAL checkpoint) that would otherwise hold the event loop that answers requests.
// In the calling thread where no thread can be started (the tests of the log itself).

import { Worker } from 'node:worker_threads';
import type { QueueKey } from '../queue/seal.js';
import { encodeBatch, transferable, type WireBatch } from './entry-wire.js';
import type { CapturedRequest, LogEntry } from './log-entry.js';
import { sealRequests } from './sealed-request.js';
import type { DeliveryStoreLocation } from './settings.js';
import type { DeliveryStore, DeliveryWrite } from './store.js';

export interface BatchWriter {
  /** Rejects with the reason when the batch was not written. */
  write(entries: readonly LogEntry[]): Promise<void>;
  /** The store's prune, where the writes are made: in the writer thread, its deletes never hold up requests. */
  prune(before: number, keep: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * The batch as the store takes it: each kept request sealed (the small ones of the batch
 * together, sealed-request.ts), its group written before the deliveries that name it.
 */
export function sealed(keys: readonly QueueKey[] | null, entries: readonly LogEntry[]): DeliveryWrite[] {
  const kept: { delivery: string; request: CapturedRequest }[] = [];
  if (keys !== null) for (const e of entries) if (e.kind === 'delivery' && e.request !== null) kept.push({ delivery: e.record.id, request: e.request });
  const { sealed: blobs, groups } = keys === null || kept.length === 0 ? { sealed: [], groups: [] } : sealRequests(keys, kept);
  const writes: DeliveryWrite[] = groups.map((g) => ({ kind: 'sealed-group', id: g.id, sealed: g.sealed }));
  let next = 0;
  for (const entry of entries) {
    if (entry.kind === 'task') {
      writes.push(entry);
      continue;
    }
    const blob = entry.request !== null && keys !== null ? blobs[next++]! : null;
    const record = blob === null && entry.record.request === 'sealed' ? { ...entry.record, request: 'not-kept' as const } : entry.record;
    writes.push({ kind: 'delivery', record, sealed: blob });
  }
  return writes;
}

/** Seals and writes in this thread. */
export function writerHere(store: DeliveryStore, keys: readonly QueueKey[] | null): BatchWriter {
  return {
    write: (entries) => store.write(sealed(keys, entries)),
    prune: (before, keep) => store.prune(before, keep),
    close: () => Promise.resolve(),
  };
}

/** One batch at a time: a batch's bodies and text are in the memory shared with the thread (entry-wire.ts). */
export type WriterRequest =
  | { readonly kind: 'write'; readonly id: number; readonly batch: WireBatch }
  | { readonly kind: 'prune'; readonly id: number; readonly before: number; readonly keep: number }
  | { readonly kind: 'close'; readonly id: number };
/** `removed`: a prune's count. */
export type WriterReply = { readonly id: number; readonly error: string | null; readonly removed?: number | undefined };
export interface WriterInit {
  readonly location: DeliveryStoreLocation;
  /** The sealing keys' bytes; empty: requests are not kept. */
  readonly keys: readonly Buffer[];
  /** Where a batch's text is handed over (WriterRequest). */
  readonly shared: SharedArrayBuffer;
}

/**
 * Room for a batch of 200 webhooks of 20 KB (at 2,000 a second, 100 ms of them); a batch with
 * more sends the rest in its message. Touched pages stay the process's: 4 MiB of memory at most.
 */
const SHARED_BYTES = 4 << 20;

/** Seals and writes in a thread that opens its own connection to the store. Rejects when that store cannot be opened. */
export async function writerThread(location: DeliveryStoreLocation, keys: readonly QueueKey[] | null): Promise<BatchWriter> {
  const shared = new SharedArrayBuffer(SHARED_BYTES);
  const sharedView = Buffer.from(shared);
  const init: WriterInit = { location, keys: keys?.map((k) => k.key) ?? [], shared };
  const worker = new Worker(new URL('./writer-thread.js', import.meta.url), { workerData: init });
  // The thread never keeps a process alive: close() ends it, and a process that exits without
  // closing loses what a kill -9 would.
  worker.unref();
  const waiting = new Map<number, { resolve: (removed: number) => void; reject: (error: Error) => void }>();
  let next = 0;
  let broken: Error | null = null;
  const fail = (error: Error) => {
    broken ??= error;
    for (const w of waiting.values()) w.reject(error);
    waiting.clear();
  };
  worker.on('message', (reply: WriterReply | { ready: true } | { openError: string }) => {
    if ('id' in reply) {
      const w = waiting.get(reply.id);
      waiting.delete(reply.id);
      if (reply.error === null) w?.resolve(reply.removed ?? 0);
      else w?.reject(new Error(reply.error));
    }
  });
  worker.on('error', fail);
  worker.on('exit', () => fail(new Error('the delivery log writer thread ended')));
  await new Promise<void>((resolve, reject) => {
    const first = (message: { ready?: true; openError?: string }) => {
      worker.off('message', first);
      if (message.openError !== undefined) reject(new Error(message.openError));
      else resolve();
    };
    worker.on('message', first);
    worker.once('error', reject);
  });
  const ask = (request: WriterRequest, transfer: ArrayBuffer[] = []) =>
    new Promise<number>((resolve, reject) => {
      if (broken !== null) return reject(broken);
      waiting.set(request.id, { resolve, reject });
      worker.postMessage(request, transfer);
    });
  // One batch at a time: the shared memory holds one, used by the thread before it answers.
  let previous: Promise<unknown> = Promise.resolve();
  const send = async (entries: readonly LogEntry[]): Promise<void> => {
    const batch = encodeBatch(entries, sharedView);
    await ask({ kind: 'write', id: next++, batch }, transferable(batch));
  };
  return {
    write(entries) {
      const written = previous.then(() => send(entries));
      previous = written.catch(() => {});
      return written;
    },
    prune: (before, keep) => ask({ kind: 'prune', id: next++, before, keep }),
    async close() {
      await ask({ kind: 'close', id: next++ }).catch(() => {});
      await worker.terminate();
    },
  };
}
