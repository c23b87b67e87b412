// Large JSON bodies are parsed, and their JSONPaths selected, on threads of their own, so one
// request's body never holds the event loop that answers every other request (and /_health):
// a 9 MB body held it for 2 s with `$.a`, for 12 s with five paths (docs/behaviour.md,
// "Parameters and their rules"). A body of at most INLINE_JSON_BYTES is read where it arrives:
// a thread's round trip would cost it more than the parse.
//
// Up to two threads per process, started on the first large body and kept (unreferenced, so
// they never keep a process alive); bodies wait for a free thread in the order they came. A
// thread that dies is replaced, and the bodies it held are refused as unreadable.

import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { jsonBodyOf, jsonPathsOf as jsonPathsOfParameters, readJsonBody, INLINE_JSON_BYTES, type JsonBodyResult } from '../../runtime/json-body.js';
import type { Endpoint, ParameterDeclaration } from '../../compiler/ast.js';
import type { ValueMap } from '../../runtime/urlencoded.js';
import type { JsonAnswer, JsonJob } from './json-worker.js';
import type { JsonBodyData } from '../../runtime/json-body.js';

const THREADS = Math.max(1, Math.min(2, availableParallelism()));

interface Pending {
  readonly job: JsonJob;
  readonly resolve: (data: JsonBodyData) => void;
}

class JsonThread {
  private readonly worker: Worker;
  current: Pending | null = null;

  constructor(private readonly pool: JsonThreads) {
    this.worker = new Worker(new URL('./json-worker.js', import.meta.url));
    this.worker.on('message', (answer: JsonAnswer) => {
      const done = this.current;
      this.current = null;
      if (done !== null && done.job.id === answer.id) done.resolve(answer.data);
      this.pool.next(this);
    });
    const failed = () => {
      const lost = this.current;
      this.current = null;
      lost?.resolve({ ok: false, detail: 'malformed JSON body: it cannot be read' });
      this.pool.lost(this);
    };
    this.worker.on('error', failed);
    this.worker.on('exit', failed);
    // After the listeners, which would take a reference again.
    this.worker.unref();
  }

  run(pending: Pending): void {
    this.current = pending;
    // The job's bytes are a copy of the body's own (kept for a signature, a forward, the log), handed over without another.
    this.worker.postMessage(pending.job, [pending.job.bytes.buffer as ArrayBuffer]);
  }
}

class JsonThreads {
  private readonly idle: JsonThread[] = [];
  private readonly all = new Set<JsonThread>();
  private readonly waiting: Pending[] = [];
  private nextId = 0;

  read(bytes: Uint8Array, paths: readonly string[]): Promise<JsonBodyData> {
    return new Promise((resolve) => {
      const pending: Pending = { job: { id: this.nextId++, bytes: new Uint8Array(bytes), paths }, resolve };
      const thread = this.idle.pop() ?? (this.all.size < THREADS ? this.start() : null);
      if (thread === null) this.waiting.push(pending);
      else thread.run(pending);
    });
  }

  private start(): JsonThread {
    const thread = new JsonThread(this);
    this.all.add(thread);
    return thread;
  }

  next(thread: JsonThread): void {
    const pending = this.waiting.shift();
    if (pending === undefined) this.idle.push(thread);
    else thread.run(pending);
  }

  lost(thread: JsonThread): void {
    if (!this.all.delete(thread)) return;
    const index = this.idle.indexOf(thread);
    if (index >= 0) this.idle.splice(index, 1);
    const pending = this.waiting.shift();
    if (pending !== undefined) this.start().run(pending);
  }
}

let threads: JsonThreads | null = null;

const pathsByParameters = new WeakMap<readonly ParameterDeclaration[], readonly string[]>();

/** The distinct JSONPaths an endpoint's parameters read (what a thread selects for it), worked out once per endpoint. */
export function jsonPathsOf(endpoint: Endpoint): readonly string[] {
  let paths = pathsByParameters.get(endpoint.parameters);
  if (paths === undefined) {
    paths = jsonPathsOfParameters(endpoint.parameters);
    pathsByParameters.set(endpoint.parameters, paths);
  }
  return paths;
}

/** A JSON body's parameters added to `into`; parsed here when small, on a thread of its own when large. */
export function readJsonBodyOffThread(bytes: Buffer, into: ValueMap, paths: readonly string[]): JsonBodyResult | Promise<JsonBodyResult> {
  if (bytes.length <= INLINE_JSON_BYTES) return readJsonBody(bytes, into);
  threads ??= new JsonThreads();
  return threads.read(bytes, paths).then((data) => jsonBodyOf(data, into));
}
