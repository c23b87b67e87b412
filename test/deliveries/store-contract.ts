// What every DeliveryStore promises (src/deliveries/store.ts), written once and run on each store
// by its own suite: SQLite on a temporary file, Redis under a key prefix of its own, PostgreSQL in
// a schema of its own.
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryRecord, TaskRecord, TaskState } from '../../src/deliveries/record.js';
import type { DeliveryQuery, DeliveryStore, DeliveryWrite } from '../../src/deliveries/store.js';

/** One store, empty at first; each open() is another connection to it (as another serve process would have). */
export interface StoreUnderTest {
  open(): Promise<DeliveryStore>;
}

export const T0 = Date.parse('2025-03-01T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

export function task(id: string, state: TaskState, more: Partial<TaskRecord> = {}): TaskRecord {
  return { id, kind: 'http-request', state, attempts: 1, status: null, error: null, durationMs: null, ...more };
}

export function record(id: string, ms: number, more: Partial<DeliveryRecord> = {}): DeliveryRecord {
  return {
    id,
    receivedAt: iso(ms),
    endpoint: 'contact',
    method: 'POST',
    path: '/contact',
    client: '203.0.113.7',
    verdict: 'accepted',
    status: 200,
    reason: null,
    durationMs: 3,
    deduplicationKey: null,
    replayOf: null,
    job: null,
    tasks: [],
    request: 'not-kept',
    ...more,
  };
}

export const delivery = (r: DeliveryRecord, sealed: string | null = null): DeliveryWrite => ({ kind: 'delivery', record: r, sealed });
export const taskWrite = (deliveryId: string, t: TaskRecord): DeliveryWrite => ({ kind: 'task', delivery: deliveryId, task: t });

const ids = (records: readonly DeliveryRecord[]) => records.map((r) => r.id);

/** Every delivery `query` selects, page by page through the cursor. */
async function allPages(store: DeliveryStore, query: Omit<DeliveryQuery, 'limit' | 'after'>, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let after: DeliveryQuery['after'];
  for (;;) {
    const page = await store.list({ ...query, limit, ...(after === undefined ? {} : { after }) });
    if (page.length === 0) return pages;
    pages.push(ids(page));
    const last = page.at(-1)!;
    after = { receivedAt: last.receivedAt, id: last.id };
    if (pages.length > 100) throw new Error('the cursor does not move on');
  }
}

export function deliveryStoreContract(newStore: () => Promise<StoreUnderTest>): void {
  const opened: DeliveryStore[] = [];
  afterEach(async () => {
    await Promise.allSettled(opened.splice(0).map((s) => s.close()));
  });

  /** A new, empty store and a first connection to it; `again` opens another. */
  async function fresh(): Promise<{ store: DeliveryStore; again: () => Promise<DeliveryStore> }> {
    const under = await newStore();
    const again = async () => {
      const store = await under.open();
      opened.push(store);
      return store;
    };
    return { store: await again(), again };
  }

  describe('writing and reading', () => {
    const full = record('req-full', T0, {
      endpoint: 'orders',
      method: 'PUT',
      path: '/orders/7?x=1',
      client: '2001:db8::1',
      verdict: 'failed',
      status: 502,
      reason: 'the task "crm" failed: the upstream answered 500',
      durationMs: 12.5,
      deduplicationKey: 'order-7',
      replayOf: 'req-first',
      job: 'job-42',
      tasks: [
        task('crm', 'failed', { attempts: 3, status: 500, error: 'the upstream answered 500', durationMs: 40.25 }),
        task('mail', 'not-started', { kind: 'email' }),
      ],
      request: 'sealed',
    });

    it('gives back what was written, field for field, with the sealed request', async () => {
      const { store } = await fresh();
      const bare = record('req-bare', T0 + 1);
      await store.write([delivery(full, 'AAECAwQFBgc='), delivery(bare)]);
      expect(await store.get('req-full')).toEqual({ record: full, sealed: 'AAECAwQFBgc=' });
      expect(await store.get('req-bare')).toEqual({ record: bare, sealed: null });
      expect(await store.get('req-none')).toBeNull();
      expect(await store.list({ limit: 10 })).toEqual([bare, full]);
    });

    it('keeps the later of two writes of one delivery', async () => {
      const { store } = await fresh();
      await store.write([delivery(record('req-1', T0, { status: 202 }), 'b25l')]);
      await store.write([delivery(record('req-1', T0 + 5, { status: 200 }))]);
      expect(await store.get('req-1')).toEqual({ record: record('req-1', T0 + 5, { status: 200 }), sealed: null });
      expect(ids(await store.list({ limit: 10 }))).toEqual(['req-1']);
    });

    it('writes nothing for an empty batch', async () => {
      const { store } = await fresh();
      await store.write([]);
      expect(await store.list({ limit: 10 })).toEqual([]);
    });
  });

  describe('task writes', () => {
    it('replace the task of the same id; a new id is added after the record’s own, in the order first written', async () => {
      const { store } = await fresh();
      await store.write([delivery(record('req-1', T0, { tasks: [task('a', 'pending'), task('b', 'pending')] }))]);
      await store.write([
        taskWrite('req-1', task('z', 'running')),
        taskWrite('req-1', task('a', 'succeeded', { status: 201 })),
        taskWrite('req-1', task('c', 'running')),
      ]);
      await store.write([taskWrite('req-1', task('z', 'failed', { error: 'z failed' }))]);
      const expected = [task('a', 'succeeded', { status: 201 }), task('b', 'pending'), task('z', 'failed', { error: 'z failed' }), task('c', 'running')];
      expect((await store.get('req-1'))!.record.tasks).toEqual(expected);
      expect((await store.list({ limit: 1 }))[0]!.tasks).toEqual(expected);
    });

    it('that arrive before their delivery are merged once it lands', async () => {
      const { store } = await fresh();
      await store.write([taskWrite('req-1', task('a', 'succeeded'))]);
      expect(await store.get('req-1')).toBeNull();
      expect(await store.list({ limit: 10 })).toEqual([]);
      await store.write([delivery(record('req-1', T0, { tasks: [task('a', 'pending')] }))]);
      expect((await store.get('req-1'))!.record.tasks).toEqual([task('a', 'succeeded')]);
    });

    it('never move an ended task back to an unfinished state, in one batch or across batches', async () => {
      const { store } = await fresh();
      await store.write([
        delivery(record('req-1', T0, { tasks: [task('a', 'pending'), task('own', 'succeeded')] })),
        taskWrite('req-1', task('a', 'running')),
        taskWrite('req-1', task('a', 'succeeded')),
        taskWrite('req-1', task('a', 'running', { attempts: 2 })),
        // The record's own ended task is not hidden by a late unfinished write either.
        taskWrite('req-1', task('own', 'running')),
      ]);
      await store.write([taskWrite('req-1', task('a', 'pending'))]);
      expect((await store.get('req-1'))!.record.tasks).toEqual([task('a', 'succeeded'), task('own', 'succeeded')]);
      // An ended state replaces another ended one: the later word wins.
      await store.write([taskWrite('req-1', task('a', 'delivery-unknown')), taskWrite('req-1', task('own', 'failed', { error: 'own failed' }))]);
      expect((await store.get('req-1'))!.record.tasks).toEqual([task('a', 'delivery-unknown'), task('own', 'failed', { error: 'own failed' })]);
    });

    it('keep an ended state written before the delivery against a later unfinished one', async () => {
      const { store } = await fresh();
      await store.write([taskWrite('req-1', task('a', 'skipped'))]);
      await store.write([taskWrite('req-1', task('a', 'running'))]);
      await store.write([delivery(record('req-1', T0, { tasks: [task('a', 'pending')] }))]);
      expect((await store.get('req-1'))!.record.tasks).toEqual([task('a', 'skipped')]);
    });
  });

  describe('listing', () => {
    // Three deliveries share T0 + 2000: the id decides among them.
    const log = [
      record('req-a', T0, { endpoint: 'contact', verdict: 'accepted', status: 200, deduplicationKey: 'Order-17' }),
      record('req-b', T0 + 1000, { endpoint: 'orders', verdict: 'refused', status: 400, reason: 'The field "email" is MISSING' }),
      record('req-c', T0 + 2000, { endpoint: 'contact', verdict: 'spam', status: 200 }),
      record('req-e', T0 + 2000, { endpoint: 'orders', verdict: 'accepted', status: 202 }),
      record('req-d', T0 + 2000, { endpoint: 'contact', verdict: 'limited', status: 429, reason: 'too many requests' }),
      record('REQ-F', T0 + 3000, { endpoint: 'orders', verdict: 'failed', status: 502, reason: 'the task failed' }),
    ];
    const written = async () => {
      const { store } = await fresh();
      await store.write(log.slice(0, 3).map((r) => delivery(r)));
      await store.write(log.slice(3).map((r) => delivery(r)));
      return store;
    };

    it('is newest first, then by id, both descending', async () => {
      const store = await written();
      expect(ids(await store.list({ limit: 10 }))).toEqual(['REQ-F', 'req-e', 'req-d', 'req-c', 'req-b', 'req-a']);
      expect(ids(await store.list({ limit: 2 }))).toEqual(['REQ-F', 'req-e']);
      expect(await store.list({ limit: 0 })).toEqual([]);
    });

    it('filters by endpoint, verdict, status and time, bounds included', async () => {
      const store = await written();
      expect(ids(await store.list({ limit: 10, endpoint: 'contact' }))).toEqual(['req-d', 'req-c', 'req-a']);
      expect(ids(await store.list({ limit: 10, verdict: 'accepted' }))).toEqual(['req-e', 'req-a']);
      expect(ids(await store.list({ limit: 10, status: 200 }))).toEqual(['req-c', 'req-a']);
      expect(ids(await store.list({ limit: 10, since: T0 + 1000, until: T0 + 2000 }))).toEqual(['req-e', 'req-d', 'req-c', 'req-b']);
      expect(ids(await store.list({ limit: 10, since: T0 + 2001 }))).toEqual(['REQ-F']);
      expect(ids(await store.list({ limit: 10, until: T0 }))).toEqual(['req-a']);
      expect(ids(await store.list({ limit: 10, endpoint: 'orders', verdict: 'accepted', since: T0 + 2000 }))).toEqual(['req-e']);
      expect(ids(await store.list({ limit: 10, endpoint: 'nowhere' }))).toEqual([]);
    });

    it('finds text in the id, the deduplication key or the reason, whatever its case', async () => {
      const store = await written();
      expect(ids(await store.list({ limit: 10, text: 'req-f' }))).toEqual(['REQ-F']);
      expect(ids(await store.list({ limit: 10, text: 'order-1' }))).toEqual(['req-a']);
      expect(ids(await store.list({ limit: 10, text: 'missing' }))).toEqual(['req-b']);
      expect(ids(await store.list({ limit: 10, text: 'TASK' }))).toEqual(['REQ-F']);
      expect(ids(await store.list({ limit: 10, text: 'REQ-' }))).toHaveLength(6);
      expect(ids(await store.list({ limit: 10, text: '%' }))).toEqual([]);
      expect(ids(await store.list({ limit: 10, text: 'many', endpoint: 'orders' }))).toEqual([]);
    });

    it('pages through the cursor without a gap or a repeat, ties included', async () => {
      const { store } = await fresh();
      // 30 deliveries over 7 instants: most pages end inside a tie.
      const many = Array.from({ length: 30 }, (_, i) =>
        record(`id-${String((i * 7) % 30).padStart(2, '0')}`, T0 + Math.floor(i / 5) * 10, { endpoint: i % 3 === 0 ? 'a' : 'b' }),
      );
      await store.write(many.map((r) => delivery(r)));
      const everything = ids(await store.list({ limit: 100 }));
      expect(everything).toHaveLength(30);
      for (const size of [1, 4, 7]) {
        const pages = await allPages(store, {}, size);
        expect(pages.flat()).toEqual(everything);
        expect(pages.slice(0, -1).every((p) => p.length === size)).toBe(true);
      }
      const filtered = ids(await store.list({ limit: 100, endpoint: 'a' }));
      expect(filtered).toHaveLength(10);
      expect((await allPages(store, { endpoint: 'a' }, 3)).flat()).toEqual(filtered);
      const window = { since: T0 + 10, until: T0 + 40 };
      expect((await allPages(store, window, 4)).flat()).toEqual(ids(await store.list({ limit: 100, ...window })));
    });
  });

  describe('prune', () => {
    it('removes what was received before the time given, with its task writes', async () => {
      const { store } = await fresh();
      await store.write([0, 1, 2, 3].map((i) => delivery(record(`req-${i}`, T0 + i * 1000, { tasks: [task('a', 'pending')] }))));
      await store.write([taskWrite('req-0', task('a', 'succeeded')), taskWrite('req-3', task('a', 'succeeded'))]);
      expect(await store.prune(T0 + 2000, Number.MAX_SAFE_INTEGER)).toBe(2);
      expect(ids(await store.list({ limit: 10 }))).toEqual(['req-3', 'req-2']);
      expect(await store.get('req-0')).toBeNull();
      // Written again, req-0 no longer has the task write it had.
      await store.write([delivery(record('req-0', T0 + 5000, { tasks: [task('a', 'pending')] }))]);
      expect((await store.get('req-0'))!.record.tasks).toEqual([task('a', 'pending')]);
      expect((await store.get('req-3'))!.record.tasks).toEqual([task('a', 'succeeded')]);
      expect(await store.prune(T0, Number.MAX_SAFE_INTEGER)).toBe(0);
    });

    it('then keeps only the newest `keep`, ties in the newest-first order', async () => {
      const { store } = await fresh();
      await store.write(['a', 'b', 'c', 'd', 'e'].map((id, i) => delivery(record(`req-${id}`, T0 + (i < 3 ? 0 : i) * 1000))));
      expect(await store.prune(T0 - 1, 4)).toBe(1);
      expect(ids(await store.list({ limit: 10 }))).toEqual(['req-e', 'req-d', 'req-c', 'req-b']);
      expect(await store.prune(T0 + 1, 2)).toBe(2);
      expect(ids(await store.list({ limit: 10 }))).toEqual(['req-e', 'req-d']);
      expect(await store.prune(T0, 0)).toBe(2);
      expect(await store.list({ limit: 10 })).toEqual([]);
    });
  });

  describe('requests sealed in a group', () => {
    const group = (id: string, sealed: string): DeliveryWrite => ({ kind: 'sealed-group', id, sealed });

    it('are given back with the group they name; one naming a group that is not there, as not kept', async () => {
      const { store } = await fresh();
      await store.write([group('req-1', 'QUJD'), delivery(record('req-1', T0), 'g.req-1'), delivery(record('req-2', T0 + 1), 'g.req-1')]);
      await store.write([delivery(record('req-3', T0 + 2), 'g.req-9')]);
      expect((await store.get('req-1'))!.sealed).toBe('g.req-1.QUJD');
      expect((await store.get('req-2'))!.sealed).toBe('g.req-1.QUJD');
      expect((await store.get('req-3'))!.sealed).toBeNull();
    });

    it('are pruned once no delivery left can name them, and kept while one can', async () => {
      const { store } = await fresh();
      const now = Date.now();
      await store.write([group('req-1', 'QUJD'), delivery(record('req-1', T0), 'g.req-1')]);
      // Received after the group was written, by more than the margin: it cannot name the group.
      await store.write([delivery(record('req-late', now + 10 * 60_000))]);
      await store.write([delivery(record('req-2', T0 + 1), 'g.req-1')]);
      expect(await store.prune(T0 - 1, Number.MAX_SAFE_INTEGER)).toBe(0);
      expect((await store.get('req-2'))!.sealed).toBe('g.req-1.QUJD');
      expect(await store.prune(T0 + 2, Number.MAX_SAFE_INTEGER)).toBe(2);
      await store.write([delivery(record('req-3', now + 11 * 60_000), 'g.req-1')]);
      expect((await store.get('req-3'))!.sealed).toBeNull();
    });
  });

  describe('replay tickets', () => {
    it('are taken oldest first, each once, and keep the outcome they are finished with', async () => {
      const { store } = await fresh();
      const first = await store.requestReplay('req-1');
      const second = await store.requestReplay('req-2');
      expect(first).not.toBe(second);
      expect(await store.replayOutcome(first)).toBeNull();
      expect(await store.claimReplay()).toEqual({ ticket: first, delivery: 'req-1' });
      expect(await store.replayOutcome(first)).toBeNull();
      expect(await store.claimReplay()).toEqual({ ticket: second, delivery: 'req-2' });
      expect(await store.claimReplay()).toBeNull();
      await store.finishReplay(first, { ok: true, delivery: 'req-9' });
      await store.finishReplay(second, { ok: false, error: 'the endpoint "orders" is no longer in endpoints.xml' });
      expect(await store.replayOutcome(first)).toEqual({ ok: true, delivery: 'req-9' });
      expect(await store.replayOutcome(second)).toEqual({ ok: false, error: 'the endpoint "orders" is no longer in endpoints.xml' });
      expect(await store.replayOutcome('no-such-ticket')).toBeNull();
    });

    it('are never taken twice by two connections claiming at once', async () => {
      const { store, again } = await fresh();
      const other = await again();
      const tickets = new Set<string>();
      for (let i = 0; i < 20; i++) tickets.add(await store.requestReplay(`req-${i}`));
      const claims = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? store : other).claimReplay()));
      const taken = claims.filter((c) => c !== null).map((c) => c.ticket);
      expect(taken).toHaveLength(20);
      expect(new Set(taken)).toEqual(tickets);
    });
  });

  it('counts the deliveries since a time per verdict and per endpoint', async () => {
    const { store } = await fresh();
    await store.write([
      delivery(record('req-1', T0 - 1, { endpoint: 'old', verdict: 'failed' })),
      delivery(record('req-2', T0, { endpoint: 'contact', verdict: 'accepted' })),
      delivery(record('req-3', T0 + 5, { endpoint: 'contact', verdict: 'spam' })),
      delivery(record('req-4', T0 + 9, { endpoint: 'orders', verdict: 'accepted' })),
    ]);
    expect(await store.counts(T0)).toEqual({ verdicts: { accepted: 2, spam: 1 }, endpoints: { contact: 2, orders: 1 } });
    expect(await store.counts(T0 + 10)).toEqual({ verdicts: {}, endpoints: {} });
  });

  describe('two connections to one store', () => {
    it('write one log between them, losing nothing', async () => {
      const { store, again } = await fresh();
      const other = await again();
      const batches = Array.from({ length: 20 }, (_, b) => Array.from({ length: 10 }, (_, i) => delivery(record(`req-${b}-${i}`, T0 + b * 10 + i))));
      await Promise.all(batches.map((batch, b) => (b % 2 === 0 ? store : other).write(batch)));
      expect(await store.list({ limit: 1000 })).toHaveLength(200);
      expect(await other.list({ limit: 1000 })).toHaveLength(200);
    });

    it('keep an ended task ended whichever write lands last', async () => {
      const { store, again } = await fresh();
      const other = await again();
      await store.write([delivery(record('req-1', T0, { tasks: [task('a', 'pending')] }))]);
      await Promise.all([
        ...Array.from({ length: 10 }, (_, i) => store.write([taskWrite('req-1', task('a', 'running', { attempts: i }))])),
        other.write([taskWrite('req-1', task('a', 'succeeded'))]),
        ...Array.from({ length: 10 }, (_, i) => other.write([taskWrite('req-1', task('a', 'running', { attempts: 20 + i }))])),
      ]);
      expect((await store.get('req-1'))!.record.tasks).toEqual([task('a', 'succeeded')]);
    });
  });

  it('closes, and a connection opened after finds what was written', async () => {
    const { store, again } = await fresh();
    await store.write([delivery(record('req-1', T0), 'c2VhbGVk')]);
    await store.close();
    await store.close();
    expect(await (await again()).get('req-1')).toEqual({ record: record('req-1', T0), sealed: 'c2VhbGVk' });
  });
}
