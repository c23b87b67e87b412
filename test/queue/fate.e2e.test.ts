// A job's fate (src/queue/fate.ts) on a real store, against BullMQ's own add and fetch: a void
// made before the job is stored keeps the add from storing it; a void of a stored job no worker
// has fetched is read by the worker with the job; a job a worker fetched first is started. The
// producer's answer and what the worker finds agree for every job, however the two race.
import { randomBytes } from 'node:crypto';
import type { Job, Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/queue/store.js';
import { readProgress } from '../../src/queue/job.js';
import { eventually, inspect, queueBackends, runsOn, stopSpawnedRedis, storeSettings, uniqueQueueName, type StoreInspector } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);

describe.each(backends)('job fates on %s', (backend) => {
  if (!runsOn(backend)) return;
  const name = uniqueQueueName('fate');
  const settings = storeSettings(backend, name);
  let store: Store;
  let inspector: StoreInspector;
  let queue: Queue;
  const id = () => `${randomBytes(6).toString('hex')}.00000000`;
  const add = (jobId: string) => queue.add('order', { requestId: jobId }, { jobId });
  const waiting = async () => (await queue.getJobCounts('waiting')).waiting ?? 0;

  beforeAll(async () => {
    store = await openStore(settings, 'producer', () => {});
    // As serve's producer: its queue, which the store's first operation readies.
    store.newQueue();
    inspector = inspect(backend, name);
    queue = inspector.queue;
  });
  afterAll(async () => {
    await store?.close();
    await inspector?.close();
  });

  it('keeps a job voided before it was stored from being stored at all', async () => {
    const jobId = id();
    expect(await store.voidJob(jobId, 'order', jobId)).toBe('void');
    // A second void (serve asks once; a store that answers late may see it twice) holds too.
    expect(await store.voidJob(jobId, 'order', jobId)).toBe('void');
    await add(jobId);
    expect(await waiting()).toBe(0);
    expect(await queue.getJobState(jobId)).not.toBe('waiting');
    // What `jobs` reads of the id: the void record, naming the request and the endpoint.
    const record = (await queue.getJob(jobId))!;
    expect(record.data).toMatchObject({ requestId: jobId, endpoint: 'order' });
    expect(readProgress(record.progress).void).toBe(true);
  });

  it('marks a stored job no worker has fetched void, in the progress the worker reads with it', async () => {
    const jobId = id();
    await add(jobId);
    expect(readProgress((await queue.getJob(jobId))!.progress).void).toBeUndefined();
    expect(await store.voidJob(jobId, 'order', jobId)).toBe('void');
    expect(readProgress((await queue.getJob(jobId))!.progress).void).toBe(true);
    await queue.remove(jobId);
  });

  it("agrees with the worker for every job, however the voids and the worker's fetches race", async () => {
    const ids = Array.from({ length: 40 }, id);
    // Half stored before the race, the other half stored during it, some of them after their void.
    for (const jobId of ids.slice(0, 20)) await add(jobId);
    const seen = new Map<string, boolean>();
    const worker: Worker = store.newWorker(
      async (job: Job) => {
        seen.set(job.id!, readProgress(job.progress).void === true);
      },
      { concurrency: 8 },
    );
    try {
      const fates = await Promise.all(
        ids.map(async (jobId, i) => {
          if (i >= 20 && i % 2 === 0) await add(jobId);
          const fate = await store.voidJob(jobId, 'order', jobId);
          if (i >= 20 && i % 2 === 1) await add(jobId);
          return [jobId, fate] as const;
        }),
      );
      // Every job that was stored has been fetched by the worker.
      await eventually(async () => ((await waiting()) === 0 && (await queue.getJobCounts('active')).active === 0 ? true : undefined), 'the queue drained');
      for (const [jobId, fate] of fates) {
        if (fate === 'started') expect(seen.get(jobId), jobId).toBe(false);
        // A void job is never run: either never stored, or fetched with its void mark.
        else expect(seen.get(jobId) ?? true, jobId).toBe(true);
      }
      // Voided before it was stored: never stored, so never fetched.
      for (const jobId of ids.filter((_, i) => i >= 20 && i % 2 === 1)) expect(seen.has(jobId), jobId).toBe(false);
    } finally {
      await worker.close();
    }
  }, 60_000);

  it('leaves a job a worker has fetched to that worker: the void answers started', async () => {
    const jobId = id();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let fetched = false;
    const worker: Worker = store.newWorker(
      async () => {
        fetched = true;
        await held;
      },
      { concurrency: 1 },
    );
    try {
      await add(jobId);
      await eventually(() => (fetched ? true : undefined), 'the worker fetched the job');
      expect(await store.voidJob(jobId, 'order', jobId)).toBe('started');
      release();
      await eventually(async () => ((await queue.getJobState(jobId)) === 'completed' ? true : undefined), 'the job completed');
      // A job that ran, and completed: still started.
      expect(await store.voidJob(jobId, 'order', jobId)).toBe('started');
    } finally {
      release();
      await worker.close();
    }
  }, 30_000);
});
