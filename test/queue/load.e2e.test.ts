// Two serve processes and two workers on one Redis, a few thousand background requests, and a
// worker killed and restarted twice during them: every accepted request's task reaches the peer,
// and a task sent again after a kill carries the key it had (the receiver can tell the repeat).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import { eventually, inspect, QUEUE_KEY, queueBackends, queueFixture, runsOn, startWorker, stopSpawnedRedis, uniqueQueueName, type RunningWorker, type StoreInspector } from '../helpers/queue.js';

const backends = await queueBackends();
afterAll(stopSpawnedRedis);
const name = uniqueQueueName('load');
const REQUESTS = 2000;
const CONCURRENCY = 16;
const WORKER_CONCURRENCY = 8;

describe.each(backends)('load: 2 serve + 2 workers, workers killed during it on %s', (backend) => {
  if (!runsOn(backend)) return;
  const url = backend.url;
  let peer: HttpPeer;
  const services: RunningService[] = [];
  const workers: RunningWorker[] = [];
  let store: StoreInspector;
  const env = () => ({ PEER: peer.origin, CRM_KEY: 'k' });
  const worker = () => {
    const w = startWorker(queueFixture('basic'), url, name, ['--smtp-url', 'smtp://127.0.0.1:1', '--queue-lock-duration', '2s', '--concurrency', String(WORKER_CONCURRENCY)], env());
    workers.push(w);
    return w;
  };

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/ping', { status: 200 });
    store = inspect(backend, name);
    for (let i = 0; i < 2; i++) {
      services.push(await startServe(queueFixture('basic'), ['--queue', url, '--queue-name', name, '--no-queue-consume', '--smtp-url', 'smtp://127.0.0.1:1'], { ...env(), ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY }));
    }
  });
  afterAll(async () => {
    await Promise.all([...workers.map((w) => w.stop('SIGKILL')), ...services.map((s) => s.stop())]);
    await peer?.close();
    await store?.close();
  });

  it('delivers every accepted request, a repeat only with its own key', async () => {
    const [a, b] = [worker(), worker()];
    await Promise.all([a.origin, b.origin]);
    const accepted: number[] = [];
    let next = 0;
    const client = async () => {
      while (next < REQUESTS) {
        const n = next++;
        const response = await fetch(`${services[n % 2]!.url}/ping`, { method: 'POST', body: new URLSearchParams({ n: String(n) }) });
        await response.arrayBuffer();
        if (response.status === 200) accepted.push(n);
      }
    };
    const load = Promise.all(Array.from({ length: CONCURRENCY }, client));
    // Kill a worker in the middle of the run, twice, and start a new one each time.
    await peer.waitForRequests(REQUESTS / 4, '/ping');
    a.child.kill('SIGKILL');
    worker();
    await peer.waitForRequests(REQUESTS / 2, '/ping');
    b.child.kill('SIGKILL');
    worker();
    await load;
    expect(accepted.length).toBe(REQUESTS);

    const byN = () => {
      const keys = new Map<string, Set<string>>();
      for (const r of peer.requestsTo('/ping')) {
        const n = new URLSearchParams(r.body).get('n')!;
        if (!keys.has(n)) keys.set(n, new Set());
        keys.get(n)!.add(String(r.headers['idempotency-key']));
      }
      return keys;
    };
    await eventually(() => (byN().size >= accepted.length ? true : undefined), 'every accepted request to reach the peer', 60_000);
    const keys = byN();
    expect([...keys.keys()].map(Number).sort((x, y) => x - y)).toEqual([...accepted].sort((x, y) => x - y));
    // One key per request, whatever the number of sends.
    expect([...keys.values()].filter((set) => set.size !== 1)).toEqual([]);
    // Repeats come only from the runs cut off by the two kills.
    const repeats = peer.requestsTo('/ping').length - keys.size;
    console.log(`load: ${accepted.length} accepted, ${peer.requestsTo('/ping').length} task requests, ${repeats} repeats after the kills`);
    expect(repeats).toBeLessThanOrEqual(2 * WORKER_CONCURRENCY);
    await eventually(async () => {
      const counts = await store.queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
      return (counts.waiting ?? 0) + (counts.active ?? 0) + (counts.delayed ?? 0) === 0 ? counts : undefined;
    }, 'the queue to empty', 60_000);
    expect((await store.queue.getJobCounts('failed')).failed).toBe(0);
  }, 180_000);
});
