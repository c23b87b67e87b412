// The fenced progress write (src/queue/fenced-progress.ts) against BullMQ's own layout on a real
// store: written while the token holds the job's lock, refused (and nothing written) for any other
// token and once the job has left the worker. It reaches into BullMQ's keys and schema, so an
// upgrade that moves them fails here, not in a takeover in production.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { Job } from 'bullmq';
import { openStore, type Store } from '../../src/queue/store.js';
import { inspect, queueBackends, runsOn, stopSpawnedRedis, storeSettings, uniqueQueueName } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);

describe.each(backends)('the fenced progress write on %s', (backend) => {
  if (!runsOn(backend)) return;
  const name = uniqueQueueName('fence');
  const settings = storeSettings(backend, name);
  let store: Store | undefined;

  afterAll(async () => {
    await store?.close();
    await inspect(backend, name).close();
  });

  it("writes while the token holds the job's lock, and never for another token or after the job left", async () => {
    store = await openStore(settings, 'worker', () => {});
    const queue = store.newQueue();
    await queue.add('run', { n: 1 });
    const worker = store.newWorker(async () => {}, { autorun: false, lockDuration: 30_000 });
    const token = `token-${randomBytes(4).toString('hex')}`;
    const job = (await worker.getNextJob(token)) as Job | undefined;
    expect(job).toBeDefined();
    const stored = async () => (await queue.getJob(job!.id!))!.progress;

    expect(await store.writeProgress(job!.id!, token, JSON.stringify({ tasks: { a: 'succeeded' } }))).toBe(true);
    expect(await stored()).toEqual({ tasks: { a: 'succeeded' } });

    // Another worker's token (the one a held-up worker still has after a takeover): nothing written.
    expect(await store.writeProgress(job!.id!, 'another-token', JSON.stringify({ tasks: {} }))).toBe(false);
    expect(await stored()).toEqual({ tasks: { a: 'succeeded' } });

    await job!.moveToCompleted('done', token, false);
    expect(await store.writeProgress(job!.id!, token, JSON.stringify({ tasks: {} }))).toBe(false);
    expect(await stored()).toEqual({ tasks: { a: 'succeeded' } });
    await worker.close();
  });
});
