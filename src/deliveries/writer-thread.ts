// The delivery log's writer thread (writer.ts): opens its own connection to the store, then seals
// and writes each batch it is sent, answering each with null or the reason it was not written.

import { parentPort, workerData } from 'node:worker_threads';
import { parseQueueKey, type QueueKey } from '../queue/seal.js';
import { decodeBatch } from './entry-wire.js';
import { openDeliveryStore } from './open.js';
import type { DeliveryStore } from './store.js';
import { writerHere, type WriterInit, type WriterReply, type WriterRequest } from './writer.js';

// A thread has a process object of its own: the launcher's filter (bin/endpoint-service.js) of
// Node 22's experimental warning for node:sqlite, which this thread loads, is set again here.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
  const message = typeof warning === 'string' ? warning : warning.message;
  if ((type ?? (typeof warning === 'string' ? undefined : warning.name)) === 'ExperimentalWarning' && /^SQLite\b/.test(message)) return;
  (emitWarning as (...args: unknown[]) => void)(warning, ...rest);
}) as typeof process.emitWarning;

const init = workerData as WriterInit;
const port = parentPort!;
const shared = Buffer.from(init.shared);
const keys: QueueKey[] = init.keys.map((bytes) => parseQueueKey(Buffer.from(bytes).toString('hex'))!);

let store: DeliveryStore;
try {
  store = await openDeliveryStore(init.location, true);
} catch (error) {
  port.postMessage({ openError: error instanceof Error ? error.message : String(error) });
  process.exit(0);
}
const writer = writerHere(store, keys.length > 0 ? keys : null);
port.postMessage({ ready: true });

port.on('message', (request: WriterRequest) => {
  const reply = (error: unknown, removed?: number) =>
    port.postMessage({ id: request.id, error: error === null ? null : error instanceof Error ? error.message : String(error), removed } satisfies WriterReply);
  if (request.kind === 'prune') {
    writer.prune(request.before, request.keep).then(
      (removed) => reply(null, removed),
      (error: unknown) => reply(error),
    );
    return;
  }
  if (request.kind === 'close') {
    void store.close().then(
      () => reply(null),
      (error: unknown) => reply(error),
    );
    return;
  }
  // Sealed here, before the answer: the bodies view the shared memory, which the next batch overwrites.
  writer.write(decodeBatch(request.batch, shared)).then(
    () => reply(null),
    (error: unknown) => reply(error),
  );
});
