// The thread that reads large JSON bodies (json-thread.ts): each message is one body and the
// JSONPaths its endpoint's parameters read; the answer is the values, never the document.

import { parentPort } from 'node:worker_threads';
import { readJsonBodyData, type JsonBodyData } from '../../runtime/json-body.js';

export interface JsonJob {
  readonly id: number;
  readonly bytes: Uint8Array;
  readonly paths: readonly string[];
}

export interface JsonAnswer {
  readonly id: number;
  readonly data: JsonBodyData;
}

parentPort?.on('message', (job: JsonJob) => {
  let data: JsonBodyData;
  try {
    data = readJsonBodyData(job.bytes, job.paths);
  } catch {
    // Nothing the body holds should get here (readJsonBodyData answers every body); if it does, it is the body's doing.
    data = { ok: false, detail: 'malformed JSON body: it cannot be read' };
  }
  // The packed values' offsets are handed over, not copied.
  const transfer = data.ok ? [...data.named.map(([, v]) => v.ends.buffer), ...data.selected.flatMap(([, v]) => ('ends' in v ? [v.ends.buffer] : []))] : [];
  parentPort!.postMessage({ id: job.id, data } satisfies JsonAnswer, transfer as ArrayBuffer[]);
});
