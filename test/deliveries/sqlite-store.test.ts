// The SQLite delivery store on temporary files: the contract every store keeps, then what only a
// file has: another thread writing it at once, a file that is no database, and what the file
// holds in clear.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { rowValues, upsertDeliverySql } from '../../src/deliveries/delivery-row.js';
import { SQLITE_SCHEMA_VERSION, SQLITE_SETTINGS } from '../../src/deliveries/sqlite-schema.js';
import type { LogEntry } from '../../src/deliveries/log-entry.js';
import { unsealRequest } from '../../src/deliveries/sealed-request.js';
import { openSqliteStore } from '../../src/deliveries/sqlite-store.js';
import { writerHere } from '../../src/deliveries/writer.js';
import { parseQueueKey, seal } from '../../src/queue/seal.js';
import { delivery, deliveryStoreContract, record, T0 } from './store-contract.js';

const dir = mkdtempSync(path.join(tmpdir(), 'es-deliveries-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const newFile = () => path.join(dir, `deliveries-${++files}.db`);

interface RawDatabase {
  exec(sql: string): void;
  close(): void;
}
const { DatabaseSync } = process.getBuiltinModule('node:sqlite') as { DatabaseSync: new (file: string) => RawDatabase };

/** A store's file as this version makes it, then changed by `sql` behind its back (as another version would have left it). */
async function madeThenChanged(file: string, sql: string): Promise<void> {
  await openSqliteStore(file).close();
  const raw = new DatabaseSync(file);
  raw.exec(sql);
  raw.close();
}

describe('the SQLite delivery store', () => {
  deliveryStoreContract(async () => {
    const file = newFile();
    return { open: async () => openSqliteStore(file) };
  });

  it('is described by its file as given', async () => {
    const store = openSqliteStore(path.relative(process.cwd(), newFile()));
    expect(store.description).toMatch(/^SQLite at (?!\/).*deliveries-\d+\.db$/);
    await store.close();
  });
});

describe('a SQLite file that another thread writes at the same time', () => {
  // Another thread stands for another serve worker: its own connection, the store's settings and
  // statement, one transaction per batch. A worker thread cannot load the TypeScript store itself.
  const WRITER = `
    const { workerData, parentPort } = require('node:worker_threads');
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(workerData.file);
    db.exec(workerData.settings);
    const insert = db.prepare(workerData.insert);
    parentPort.postMessage('started');
    for (const batch of workerData.batches) {
      db.exec('BEGIN IMMEDIATE');
      for (const values of batch) insert.run(...values);
      db.exec('COMMIT');
    }
    db.close();
  `;

  it('loses no batch of either', async () => {
    const file = newFile();
    const store = openSqliteStore(file);
    const batches = (who: string) => Array.from({ length: 300 }, (_, b) => Array.from({ length: 5 }, (_, i) => record(`${who}-${b}-${i}`, T0 + b * 5 + i)));
    const worker = new Worker(WRITER, {
      eval: true,
      workerData: {
        file,
        settings: SQLITE_SETTINGS,
        insert: upsertDeliverySql('deliveries', () => '?'),
        batches: batches('thread').map((b) => b.map((r) => rowValues(r, null))),
      },
    });
    const exited = new Promise<number>((resolve, reject) => {
      worker.once('error', reject);
      worker.once('exit', resolve);
    });
    await new Promise((resolve) => worker.once('message', resolve));
    for (const batch of batches('store')) await store.write(batch.map((r) => delivery(r)));
    expect(await exited).toBe(0);
    const all = await store.list({ limit: 10_000 });
    expect(all.filter((r) => r.id.startsWith('store-'))).toHaveLength(1500);
    expect(all.filter((r) => r.id.startsWith('thread-'))).toHaveLength(1500);
    await store.close();
  });
});

describe('a file that cannot be the delivery store', () => {
  const refusal = (file: string): string => {
    try {
      openSqliteStore(file)
        .close()
        .catch(() => {});
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error(`${file} was opened`);
  };

  it('is refused in one sentence naming it when it is not a database', () => {
    const file = newFile();
    writeFileSync(file, 'endpoint,verdict\ncontact,accepted\n'.repeat(200));
    const message = refusal(file);
    expect(message).toContain(file);
    expect(message).toMatch(/is not a SQLite database or is damaged/);
    expect(message).not.toContain('\n');
  });

  it('is refused when its pages are damaged', async () => {
    const file = newFile();
    const store = openSqliteStore(file);
    await store.write([delivery(record('req-1', T0))]);
    await store.close();
    const bytes = readFileSync(file);
    // The first page past SQLite's 100-byte header holds the schema: garbled, nothing can be read.
    bytes.fill(0xa5, 100);
    writeFileSync(file, bytes);
    expect(refusal(file)).toMatch(new RegExp(`^the delivery store ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not a SQLite database or is damaged`));
  });

  it('is refused when its folder does not exist', () => {
    const file = path.join(dir, 'no-such-folder', 'deliveries.db');
    expect(refusal(file)).toBe(`the delivery store ${file} cannot be opened or made: its folder ${path.dirname(file)} does not exist`);
  });

  it.skipIf(process.getuid?.() === 0)('is refused when its folder is not writable', () => {
    const folder = path.join(dir, 'read-only');
    mkdirSync(folder);
    chmodSync(folder, 0o555);
    try {
      expect(refusal(path.join(folder, 'deliveries.db'))).toMatch(/its folder .*read-only is not writable by this user/);
    } finally {
      chmodSync(folder, 0o755);
    }
  });

  it('is refused when a newer version made it', async () => {
    const file = newFile();
    await madeThenChanged(file, 'PRAGMA user_version = 99');
    expect(refusal(file)).toContain(`was made by a newer endpoint-service (schema version 99; this one knows ${SQLITE_SCHEMA_VERSION})`);
  });

  it('is brought up to date from version 1: it gains the table of sealed groups', async () => {
    const file = newFile();
    await madeThenChanged(file, 'DROP TABLE delivery_groups; PRAGMA user_version = 1');
    const store = openSqliteStore(file);
    await store.write([{ kind: 'sealed-group', id: 'req-1', sealed: 'QUJD' }, delivery(record('req-1', T0), 'g.req-1')]);
    expect((await store.get('req-1'))!.sealed).toBe('g.req-1.QUJD');
    await store.close();
  });
});

describe('what a SQLite file holds in clear', () => {
  it('is the record, never what was sealed', async () => {
    const file = newFile();
    const store = openSqliteStore(file);
    const marker = `marker-${randomBytes(8).toString('hex')}`;
    const key = parseQueueKey(randomBytes(32).toString('hex'))!;
    const sealed = seal([key], JSON.stringify({ headers: [['authorization', `Bearer ${marker}`]], body: `token=${marker}` }), 'req-sealed');
    await store.write([delivery(record('req-sealed', T0, { endpoint: 'clear-endpoint', path: '/clear-path', request: 'sealed' }), sealed)]);
    expect((await store.get('req-sealed'))!.sealed).toBe(sealed);
    await store.close();
    const bytes = [file, `${file}-wal`]
      .filter((f) => existsSync(f))
      .map((f) => readFileSync(f).toString('latin1'))
      .join('');
    expect(bytes).toContain('clear-endpoint');
    expect(bytes).toContain('/clear-path');
    expect(bytes).toContain(sealed);
    expect(bytes).not.toContain(marker);
  });
});

describe("a batch's kept requests, written through the log's writer", () => {
  it('open, each to its own request, from a file that holds none of them in clear', async () => {
    const file = newFile();
    const store = openSqliteStore(file);
    const key = parseQueueKey(randomBytes(32).toString('hex'))!;
    const marker = `marker-${randomBytes(8).toString('hex')}`;
    const entries: LogEntry[] = [0, 1, 2].map((i) => ({
      kind: 'delivery',
      record: record(`req-${i}`, T0 + i, { request: 'sealed' }),
      request: { method: 'POST', url: `/contact?i=${i}`, rawHeaders: ['Authorization', `Bearer ${marker}`], body: [Buffer.from(`secret=${marker}-${i}`)] },
    }));
    await writerHere(store, [key]).write([...entries, { kind: 'delivery', record: record('req-bare', T0 + 5), request: null }]);
    for (const i of [0, 1, 2]) {
      const stored = await store.get(`req-${i}`);
      expect(stored!.record.request).toBe('sealed');
      const opened = unsealRequest([key], `req-${i}`, stored!.sealed!);
      expect([opened.url, opened.body.toString()]).toEqual([`/contact?i=${i}`, `secret=${marker}-${i}`]);
    }
    expect((await store.get('req-bare'))!.sealed).toBeNull();
    await store.close();
    const bytes = [file, `${file}-wal`]
      .filter((f) => existsSync(f))
      .map((f) => readFileSync(f).toString('latin1'))
      .join('');
    expect(bytes).toContain('req-2');
    expect(bytes).not.toContain(marker);
  });
});
