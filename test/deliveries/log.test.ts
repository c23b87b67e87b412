// The buffer between the request path and the store (src/deliveries/log.ts), on a real SQLite
// file: what it hands the store in each batch, and what the store then shows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DeliveryLog, MAX_PENDING } from '../../src/deliveries/log.js';
import type { LogEntry } from '../../src/deliveries/log-entry.js';
import { openSqliteStore } from '../../src/deliveries/sqlite-store.js';
import type { DeliveryStore } from '../../src/deliveries/store.js';
import { writerHere, type BatchWriter } from '../../src/deliveries/writer.js';
import { record, T0, task } from './store-contract.js';

const dir = mkdtempSync(path.join(tmpdir(), 'es-delivery-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const { DatabaseSync } = process.getBuiltinModule('node:sqlite') as {
  DatabaseSync: new (file: string) => { prepare(sql: string): { get(): Record<string, unknown> | undefined }; close(): void };
};

/** A log on a new file whose writer also keeps each batch it was handed, and says when one was written. */
function logOnFile({ writeDelayMs = 0 } = {}) {
  const file = path.join(dir, `log-${++files}.db`);
  const store: DeliveryStore = openSqliteStore(file);
  const batches: LogEntry[][] = [];
  let written: (() => void) | null = null;
  const base = writerHere(store, null);
  const writer: BatchWriter = {
    async write(entries) {
      batches.push([...entries]);
      if (writeDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, writeDelayMs));
      await base.write(entries);
      written?.();
    },
    prune: (before, keep) => base.prune(before, keep),
    close: () => base.close(),
  };
  const drops: string[] = [];
  const log = new DeliveryLog(store, null, { dropped: (_count, reason) => drops.push(reason) }, writer);
  const nextBatch = () => new Promise<void>((resolve) => (written = resolve));
  const taskRows = () => {
    const db = new DatabaseSync(file);
    const n = Number(db.prepare('SELECT count(*) AS n FROM delivery_tasks').get()!.n);
    db.close();
    return n;
  };
  const reopened = async (id: string) => {
    const again = openSqliteStore(file);
    const stored = await again.get(id);
    await again.close();
    return stored!.record;
  };
  return { log, batches, drops, nextBatch, taskRows, reopened };
}

const twoPending = (id: string) => record(id, T0, { tasks: [task('notify', 'pending'), task('archive', 'pending')] });

describe('the delivery log', () => {
  it("writes a task's outcome that comes before its delivery is written inside the delivery: one write, no update", async () => {
    const { log, batches, taskRows, reopened } = logOnFile();
    log.add({ kind: 'delivery', record: twoPending('req-1'), request: null });
    log.add({ kind: 'task', delivery: 'req-1', task: task('notify', 'succeeded', { attempts: 1, status: 201 }) });
    await log.close();
    expect(batches).toHaveLength(1);
    expect(batches[0]!.map((e) => e.kind)).toEqual(['delivery']);
    expect(taskRows()).toBe(0);
    const stored = await reopened('req-1');
    expect(stored.tasks.map((t) => [t.id, t.state, t.status])).toEqual([
      ['notify', 'succeeded', 201],
      ['archive', 'pending', null],
    ]);
  });

  it('never moves an ended task back when a later unfinished state comes before the write', async () => {
    const { log, reopened } = logOnFile();
    log.add({ kind: 'delivery', record: twoPending('req-2'), request: null });
    log.add({ kind: 'task', delivery: 'req-2', task: task('notify', 'failed', { attempts: 3, error: 'task "notify" failed: status' }) });
    log.add({ kind: 'task', delivery: 'req-2', task: task('notify', 'running') });
    await log.close();
    expect((await reopened('req-2')).tasks.map((t) => t.state)).toEqual(['failed', 'pending']);
  });

  it('writes an outcome that comes after its delivery was written as an update of it', async () => {
    const { log, batches, nextBatch, taskRows, reopened } = logOnFile();
    const first = nextBatch();
    log.add({ kind: 'delivery', record: twoPending('req-3'), request: null });
    await first;
    log.add({ kind: 'task', delivery: 'req-3', task: task('archive', 'succeeded', { attempts: 1 }) });
    log.add({ kind: 'delivery', record: twoPending('req-4'), request: null });
    await log.close();
    expect(batches.map((b) => b.map((e) => e.kind))).toEqual([['delivery'], ['task', 'delivery']]);
    expect(taskRows()).toBe(1);
    expect((await reopened('req-3')).tasks.map((t) => t.state)).toEqual(['pending', 'succeeded']);
    expect((await reopened('req-4')).tasks.map((t) => t.state)).toEqual(['pending', 'pending']);
  });

  it("writes the outcome of a delivery it never held (a worker's) as an update", async () => {
    const { log, batches } = logOnFile();
    log.add({ kind: 'task', delivery: 'req-elsewhere', task: task('notify', 'succeeded') });
    await log.close();
    expect(batches.map((b) => b.map((e) => e.kind))).toEqual([['task']]);
  });

  it('writes at most one batch per 100 ms while deliveries keep coming, not one per write of the store', async () => {
    // A store that answers in 5 ms while a delivery arrives every 5 ms: written as soon as they
    // arrived, they would go one or two to a batch.
    const { log, batches, reopened } = logOnFile({ writeDelayMs: 5 });
    let n = 0;
    const first = performance.now();
    const arrivals = setInterval(() => log.add({ kind: 'delivery', record: record(`req-r${n++}`, T0 + n), request: null }), 5);
    await new Promise((resolve) => setTimeout(resolve, 450));
    clearInterval(arrivals);
    const elapsed = performance.now() - first;
    await log.close();
    // A flush begins 100 ms or more after the one before (the first 100 ms after the first
    // delivery), and close writes once more: on a slow machine the wait runs longer, and so may
    // the count, by one a 100 ms. One write per arrival would be about one every 5 ms.
    expect(batches.length).toBeLessThanOrEqual(Math.floor(elapsed / 100) + 1);
    expect(batches.flat()).toHaveLength(n);
    expect((await reopened(`req-r${n - 1}`)).id).toBe(`req-r${n - 1}`);
  });

  it('writes on close what arrives while close is writing, in its own turn, never after the store is closed', async () => {
    // close's write takes longer than a turn: what arrives meanwhile must not start a turn of its own.
    const { log, batches, drops, reopened } = logOnFile({ writeDelayMs: 250 });
    log.add({ kind: 'delivery', record: record('req-first', T0), request: null });
    const closing = log.close();
    while (batches.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    log.add({ kind: 'delivery', record: record('req-during', T0 + 1), request: null });
    await closing;
    expect(drops).toEqual([]);
    expect((await reopened('req-during')).id).toBe('req-during');
  });

  it('holds at most 20,000 unwritten deliveries, those being written included, while the store does not answer', async () => {
    const store = openSqliteStore(path.join(dir, `log-${++files}.db`));
    let writeStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => (writeStarted = resolve));
    // A store that takes a batch and never answers.
    const stuck: BatchWriter = {
      write: () => (writeStarted(), new Promise<void>(() => {})),
      prune: async () => 0,
      close: async () => {},
    };
    let dropped = 0;
    const log = new DeliveryLog(store, null, { dropped: (count) => (dropped += count) }, stuck);
    const add = (i: number) => log.add({ kind: 'delivery', record: record(`req-m${i}`, T0 + i), request: null });
    for (let i = 0; i < 15_000; i++) add(i);
    await started;
    for (let i = 15_000; i < 30_000; i++) add(i);
    expect(MAX_PENDING).toBe(20_000);
    expect(dropped).toBe(10_000);
    await store.close();
  });
});
