// <deduplicate key for>, through the built binary with a real HTTP peer: a repeated delivery runs
// nothing and is answered as the first was (Idempotent-Replayed: true), 409 while the first
// runs, 422 for the key with another body, a failure releases the key and the retry sends the
// same Idempotency-Keys downstream; one record across --workers (the primary) and across
// instances on one Redis; a Redis that stops answering fails open, counted.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { deleteKeys, keysUnder, spawnRedis, stopSpawnedRedis, testRedisUrl, uniqueKeyPrefix, type OwnRedis } from '../helpers/redis.js';
import { fixture, StartedServices, type RunningService } from '../helpers/serve.js';
import { eventually, QUEUE_KEY, uniqueQueueName } from '../helpers/queue.js';
import { idempotencyKey } from '../../src/tasks/http-request/prepare.js';
import { createHash } from 'node:crypto';
import net from 'node:net';

const FILE = fixture('dedup');
const services = new StartedServices();
let peer: HttpPeer;
let single: RunningService;
const prefixes: string[] = [];
let sharedRedis: string | null = null;

beforeAll(async () => {
  peer = await HttpPeer.start();
  single = await services.start(FILE, [], { PEER: peer.origin });
});
afterAll(async () => {
  await services.stopAll();
  await peer?.close();
  if (sharedRedis !== null) await deleteKeys(sharedRedis, prefixes);
  await stopSpawnedRedis();
});
beforeEach(() => {
  peer.requests.length = 0;
  peer
    .route('/crm', { status: 200, body: 'ok' })
    .route('/ledger', { status: 200, body: 'ok' })
    .route('/api', { status: 201 })
    .route('/background', { status: 200, body: 'ok' });
});

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

async function deliver(service: RunningService, delivery: string | null, order: string, endpoint = 'delivery', query = ''): Promise<Answer> {
  const response = await fetch(`${service.url}/${endpoint}${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(delivery !== null ? { 'x-delivery-id': delivery } : {}) },
    body: JSON.stringify({ order }),
    redirect: 'manual',
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

async function metric(service: RunningService, outcome: string, endpoint = 'delivery'): Promise<number> {
  const text = await (await fetch(`${service.url}/_metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`endpoint_service_deduplicated_total{endpoint="${endpoint}",outcome="${outcome}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

/** A peer answer held until `release()`. */
function held(): { answer: { hold: () => Promise<void>; status: number; body: string }; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return { answer: { hold: () => gate, status: 200, body: 'ok' }, release };
}

let n = 0;
const fresh = (label: string) => `${label}-${process.pid}-${++n}`;

describe('<deduplicate> in one process', () => {
  it('a repeated delivery runs nothing and gets the first answer again, with Idempotent-Replayed: true', async () => {
    const id = fresh('seq');
    const first = await deliver(single, id, 'A-1');
    expect(first.status).toBe(200);
    expect(first.body).toBe('{"received":"A-1"}');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(peer.requestsTo('/crm')).toHaveLength(1);
    expect(peer.requestsTo('/ledger')).toHaveLength(1);

    const before = await metric(single, 'replayed');
    const replays: string[] = [];
    for (let i = 0; i < 2; i++) {
      const again = await deliver(single, id, 'A-1');
      expect(again.status).toBe(200);
      expect(again.body).toBe(first.body);
      expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      replays.push(again.headers.get('x-request-id')!);
    }
    expect(peer.requestsTo('/crm')).toHaveLength(1);
    expect(peer.requestsTo('/ledger')).toHaveLength(1);
    expect(await metric(single, 'replayed')).toBe(before + 2);
    // One log line per replay, with its request id and never the key.
    for (const requestId of replays) {
      const line = await single.waitForLog((l) => l.requestId === requestId && l.outcome === 'replayed');
      expect(JSON.stringify(line)).not.toContain(id);
    }
  });

  it('an endpoint without tasks: its answer is remembered as the key is claimed, and replayed', async () => {
    const id = fresh('ack');
    const first = await deliver(single, id, 'Q');
    const ack = await deliver(single, id, 'Q', 'ack');
    expect(first.status).toBe(200);
    expect([ack.status, ack.body, ack.headers.get('idempotent-replayed')]).toEqual([202, 'ack Q', null]);
    const again = await deliver(single, id, 'Q', 'ack');
    expect([again.status, again.body, again.headers.get('idempotent-replayed')]).toEqual([202, 'ack Q', 'true']);
    expect((await deliver(single, id, 'R', 'ack')).status).toBe(422);
  });

  it('the same key with another body or query is refused with 422 and runs nothing', async () => {
    const id = fresh('mismatch');
    expect((await deliver(single, id, 'B-1')).status).toBe(200);
    const other = await deliver(single, id, 'B-2');
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toBe('application/problem+json');
    expect((await deliver(single, id, 'B-1', 'delivery', '?x=1')).status).toBe(422);
    expect(peer.requestsTo('/crm')).toHaveLength(1);
  });

  it('a request without a key (blank) is not deduplicated', async () => {
    expect((await deliver(single, null, 'C')).status).toBe(200);
    expect((await deliver(single, null, 'C')).status).toBe(200);
    expect(peer.requestsTo('/crm')).toHaveLength(2);
  });

  it('409 with Retry-After: 1 while the first request with the key runs', async () => {
    const gate = held();
    peer.route('/crm', gate.answer);
    const id = fresh('inflight');
    const first = deliver(single, id, 'D');
    await peer.waitForRequests(1, '/crm');
    const second = await deliver(single, id, 'D');
    expect(second.status).toBe(409);
    expect(second.headers.get('retry-after')).toBe('1');
    gate.release();
    expect((await first).status).toBe(200);
    expect(peer.requestsTo('/crm')).toHaveLength(1);
  });

  it('a failed first attempt releases the key; its retry runs and sends the same Idempotency-Keys downstream', async () => {
    peer.route('/ledger', { status: 500, body: 'down' }, { status: 200, body: 'ok' });
    const id = fresh('retry');
    const failed = await deliver(single, id, 'E');
    expect(failed.status).toBe(502);
    const retried = await deliver(single, id, 'E');
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    const crm = peer.requestsTo('/crm');
    const ledger = peer.requestsTo('/ledger');
    expect(crm).toHaveLength(2);
    expect(ledger).toHaveLength(2);
    expect(crm[0]!.headers['idempotency-key']).toMatch(/^[0-9a-f]{32}$/);
    expect(crm[1]!.headers['idempotency-key']).toBe(crm[0]!.headers['idempotency-key']);
    expect(ledger[1]!.headers['idempotency-key']).toBe(ledger[0]!.headers['idempotency-key']);
    expect(ledger[0]!.headers['idempotency-key']).not.toBe(crm[0]!.headers['idempotency-key']);
    // Another delivery gets other keys.
    await deliver(single, fresh('retry'), 'E');
    expect(peer.requestsTo('/crm')[2]!.headers['idempotency-key']).not.toBe(crm[0]!.headers['idempotency-key']);
    // Now remembered.
    expect((await deliver(single, id, 'E')).headers.get('idempotent-replayed')).toBe('true');
    expect(peer.requestsTo('/crm')).toHaveLength(3);
  });

  it('an API client Idempotency-Key (folder-wide): a redirect is replayed with its Location; no key, no deduplication', async () => {
    const post = (key: string | null) =>
      fetch(`${single.url}/api`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(key !== null ? { 'idempotency-key': key } : {}) },
        body: 'name=Ada',
        redirect: 'manual',
      });
    const key = fresh('api');
    const first = await post(key);
    const again = await post(key);
    expect(again.status).toBe(first.status);
    expect(again.headers.get('location')).toBe('https://example.org/thanks?name=Ada');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(peer.requestsTo('/api')).toHaveLength(1);
    await post(null);
    await post(null);
    expect(peer.requestsTo('/api')).toHaveLength(3);
  });

  it('${body-sha256} as the key: a captured delivery replayed under a fresh delivery id runs nothing', async () => {
    const body = JSON.stringify({ order: fresh('by-body') });
    const send = (delivery: string) =>
      fetch(`${single.url}/by-body`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-github-delivery': delivery }, body });
    const first = await send(fresh('delivery'));
    expect(first.status).toBe(200);
    const replayed = await send(fresh('delivery'));
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(await replayed.text()).toBe(await first.text());
    // Another body is another key.
    const other = await fetch(`${single.url}/by-body`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body.replace('by-body', 'other'),
    });
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(peer.requestsTo('/crm')).toHaveLength(2);
  });

  it('a key header sent twice is a 400 naming the parameter, never the key of one header holding both values', async () => {
    const key = fresh('twice');
    // One header `a||b`: a key like any other, its delivery runs.
    const joined = await deliver(single, `${key}-a||${key}-b`, 'J');
    expect(joined.status).toBe(200);
    // Two headers `a` and `b` would have bound as that same key: refused before anything runs.
    // Written as bytes: fetch would join the two into one header `a, b`.
    const body = JSON.stringify({ order: 'K' });
    const port = new URL(single.url).port;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.end(
          `POST /delivery HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
            `X-Delivery-Id: ${key}-a\r\nX-Delivery-Id: ${key}-b\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      });
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('end', () => resolve({ status: Number(text.slice(9, 12)), body: text.slice(text.indexOf('\r\n\r\n') + 4) }));
      socket.on('error', reject);
    });
    expect(answer.status, answer.body).toBe(400);
    expect((JSON.parse(answer.body) as { errors: unknown }).errors).toEqual([
      { parameter: 'delivery', detail: 'parameter "delivery" takes one value and was sent 2 times (it makes the <deduplicate> key)' },
    ]);
    expect(peer.requestsTo('/crm').map((r) => JSON.parse(r.body).order)).toEqual(['J']);
  });
});

describe('<deduplicate> beside other checks, forwards and timeouts', () => {
  it('a replay counts against no rate limit; a request a limit refuses releases its key', async () => {
    const [d1, d2, d3] = [fresh('lim'), fresh('lim'), fresh('lim')];
    const order = fresh('order');
    expect((await deliver(single, d1, order, 'limited')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await deliver(single, d1, order, 'limited')).headers.get('idempotent-replayed')).toBe('true');
    // Had the replays counted, the limit of 2 per order would refuse this one.
    expect((await deliver(single, d2, order, 'limited')).status).toBe(200);
    expect((await deliver(single, d3, order, 'limited')).status).toBe(429);
    // Released, not remembered: its retry is refused by the limit again, not replayed nor 409.
    expect((await deliver(single, d3, order, 'limited')).status).toBe(429);
    expect(peer.requestsTo('/crm')).toHaveLength(2);
  });

  it('a header other than the key is not part of the fingerprint', async () => {
    const id = fresh('hdr');
    const post = (retry: string) =>
      fetch(`${single.url}/delivery`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-delivery-id': id, 'x-slack-retry-num': retry },
        body: JSON.stringify({ order: 'N' }),
      });
    expect((await post('0')).status).toBe(200);
    const again = await post('1');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(peer.requestsTo('/crm')).toHaveLength(1);
  });

  it('a forward target runs under the claim of the endpoint the request was sent to, with keys from its delivery', async () => {
    peer.route('/ledger', { status: 500, body: 'down' }, { status: 200, body: 'ok' });
    const id = fresh('fwd');
    expect((await deliver(single, id, 'O', 'entry')).status).toBe(502);
    const retried = await deliver(single, id, 'O', 'entry');
    expect(retried.status).toBe(200);
    expect(retried.body).toBe('forwarded');
    expect((await deliver(single, id, 'O', 'entry')).headers.get('idempotent-replayed')).toBe('true');
    const ledger = peer.requestsTo('/ledger');
    expect(ledger).toHaveLength(2);
    const delivery = createHash('sha256').update(`entry\n${id}`).digest('hex');
    expect(ledger[0]!.headers['idempotency-key']).toBe(idempotencyKey(delivery, 'target', 'ledger'));
    expect(ledger[1]!.headers['idempotency-key']).toBe(ledger[0]!.headers['idempotency-key']);
  });

  it('after a --request-timeout 503 the key stays claimed while the tasks run, and their success is what a retry gets', async () => {
    const timed = await services.start(FILE, ['--request-timeout', '1s'], { PEER: peer.origin });
    const gate = held();
    peer.route('/crm', gate.answer);
    const id = fresh('timeout');
    const first = await deliver(timed, id, 'P');
    expect(first.status).toBe(503);
    expect((await deliver(timed, id, 'P')).status).toBe(409);
    gate.release();
    await peer.waitForRequests(1, '/ledger');
    let again: Answer | null = null;
    for (let i = 0; i < 100; i++) {
      again = await deliver(timed, id, 'P');
      if (again.status !== 409) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(again!.status).toBe(200);
    expect(again!.headers.get('idempotent-replayed')).toBe('true');
    expect(again!.body).toBe('{"received":"P"}');
    expect(peer.requestsTo('/crm')).toHaveLength(1);
  });
});

describe('<deduplicate> with --workers 2 (the primary holds the record)', () => {
  it('8 concurrent copies of one delivery run its tasks exactly once', async () => {
    const workers = await services.start(FILE, ['--workers', '2'], { PEER: peer.origin });
    const gate = held();
    peer.route('/crm', gate.answer);
    const id = fresh('workers');
    const copies = Array.from({ length: 8 }, () => deliver(workers, id, 'F'));
    await peer.waitForRequests(1, '/crm');
    // The other seven are answered while the first is held.
    const settled: Answer[] = [];
    for (const copy of copies) void copy.then((a) => settled.push(a));
    for (let i = 0; i < 250 && settled.length < 7; i++) await new Promise((r) => setTimeout(r, 20));
    gate.release();
    const answers = await Promise.all(copies);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(7);
    expect(peer.requestsTo('/crm')).toHaveLength(1);
    expect(peer.requestsTo('/ledger')).toHaveLength(1);
    // Afterwards a copy on any worker is a replay.
    const later = await Promise.all(Array.from({ length: 4 }, () => deliver(workers, id, 'F')));
    for (const a of later) expect(a.headers.get('idempotent-replayed')).toBe('true');
    expect(peer.requestsTo('/crm')).toHaveLength(1);
    // Without tasks, remembered at once in the primary: every other copy, on either worker, is a replay.
    const ack = fresh('workers-ack');
    expect((await deliver(workers, ack, 'S', 'ack')).headers.get('idempotent-replayed')).toBeNull();
    const acks = await Promise.all(Array.from({ length: 6 }, () => deliver(workers, ack, 'S', 'ack')));
    for (const a of acks) expect([a.status, a.body, a.headers.get('idempotent-replayed')]).toEqual([202, 'ack S', 'true']);
  });
});

describe('<deduplicate> on Redis', () => {
  it('two serve instances sharing one Redis run a delivery once, and its keys expire by themselves', async (context) => {
    sharedRedis = await testRedisUrl();
    if (sharedRedis === null) return context.skip();
    const prefix = uniqueKeyPrefix('dedup');
    prefixes.push(prefix);
    const args = ['--rate-limit-store', sharedRedis, '--rate-limit-prefix', prefix];
    const [a, b] = await Promise.all([services.start(FILE, args, { PEER: peer.origin }), services.start(FILE, args, { PEER: peer.origin })]);

    const id = fresh('redis');
    expect((await deliver(a, id, 'G')).status).toBe(200);
    const replayed = await deliver(b, id, 'G');
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toBe('{"received":"G"}');
    expect(peer.requestsTo('/crm')).toHaveLength(1);
    const ack = fresh('redis-ack');
    expect((await deliver(a, ack, 'T', 'ack')).headers.get('idempotent-replayed')).toBeNull();
    const acked = await deliver(b, ack, 'T', 'ack');
    expect([acked.status, acked.body, acked.headers.get('idempotent-replayed')]).toEqual([202, 'ack T', 'true']);
    expect((await deliver(b, ack, 'U', 'ack')).status).toBe(422);

    const gate = held();
    peer.route('/crm', gate.answer);
    const concurrent = fresh('redis');
    const copies = Array.from({ length: 8 }, (_, i) => deliver(i % 2 === 0 ? a : b, concurrent, 'H'));
    await peer.waitForRequests(2, '/crm');
    // A running claim lives at most 30 s unless renewed: a process that died would free it.
    {
      const { Redis } = await import('ioredis');
      const probe = new Redis(sharedRedis);
      try {
        const ttls = await Promise.all((await keysUnder(sharedRedis, prefix)).map((k) => probe.pttl(k)));
        expect(ttls.some((t) => t > 0 && t <= 30_000)).toBe(true);
      } finally {
        probe.disconnect();
      }
    }
    const settled: Answer[] = [];
    for (const copy of copies) void copy.then((x) => settled.push(x));
    for (let i = 0; i < 250 && settled.length < 7; i++) await new Promise((r) => setTimeout(r, 20));
    gate.release();
    const answers = await Promise.all(copies);
    expect(answers.filter((x) => x.status === 200)).toHaveLength(1);
    expect(answers.filter((x) => x.status === 409)).toHaveLength(7);
    expect(peer.requestsTo('/crm')).toHaveLength(2);

    // Every key carries its expiry (for="1h"), none is left for ever: the remembered keys and the
    // order and sizes the bound on each endpoint's answers keeps beside them.
    const { Redis } = await import('ioredis');
    const redis = new Redis(sharedRedis);
    try {
      const keys = await keysUnder(sharedRedis, prefix);
      expect(keys.filter((key) => !key.includes('dedup-remembered:')).length).toBe(3);
      expect(keys.filter((key) => key.includes('dedup-remembered:')).length).toBeGreaterThan(0);
      for (const key of keys) {
        const ttl = await redis.pttl(key);
        expect(ttl).toBeGreaterThan(3_500_000);
        expect(ttl).toBeLessThanOrEqual(3_600_000);
      }
    } finally {
      redis.disconnect();
    }
  });

  it('a Redis that stops answering fails open: the delivery runs, counted as store-down and logged', async (context) => {
    const own: OwnRedis | null = await spawnRedis();
    if (own === null) return context.skip();
    let stopped = false;
    try {
      const service = await services.start(FILE, ['--rate-limit-store', own.url], { PEER: peer.origin });
      const id = fresh('down');
      expect((await deliver(service, id, 'I')).status).toBe(200);
      expect((await deliver(service, id, 'I')).headers.get('idempotent-replayed')).toBe('true');
      expect(peer.requestsTo('/crm')).toHaveLength(1);

      own.child.kill('SIGSTOP');
      stopped = true;
      const other = fresh('down');
      for (let i = 0; i < 2; i++) {
        const answer = await deliver(service, other, 'J');
        expect(answer.status).toBe(200);
        expect(answer.headers.get('idempotent-replayed')).toBeNull();
      }
      expect(peer.requestsTo('/crm')).toHaveLength(3);
      expect(await metric(service, 'store-down')).toBe(2);
      const line = await service.waitForLog((l) => l.outcome === 'store-down');
      expect(line.level).toBe('warn');
      expect(typeof line.requestId).toBe('string');

      own.child.kill('SIGCONT');
      stopped = false;
      // The claims the stalled store took when it resumed, which the service had given up on, are
      // released right behind them: the sender's next retry runs (the first ran without its key),
      // no 409 for the lease though nothing runs.
      const retried = await deliver(service, other, 'J');
      expect(retried.status, retried.body).toBe(200);
      expect(peer.requestsTo('/crm')).toHaveLength(4);
      // Back: deduplicated again.
      const back = fresh('down');
      await deliver(service, back, 'K');
      for (let i = 0; i < 20; i++) {
        const again = await deliver(service, back, 'K');
        if (again.headers.get('idempotent-replayed') === 'true') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await deliver(service, back, 'K')).headers.get('idempotent-replayed')).toBe('true');
    } finally {
      if (stopped) own.child.kill('SIGCONT');
      await own.stop();
    }
  });
});

/** The Idempotency-Key a task sends for a delivery: derived from the endpoint and the key, not the request. */
const keyFor = (endpoint: string, key: string, task: string) =>
  idempotencyKey(createHash('sha256').update(`${endpoint}\n${key}`).digest('hex'), endpoint, task);

describe('<deduplicate> with tasks="background"', () => {
  it('in process: remembered once answered; the task sends the key derived from the delivery', async () => {
    const id = fresh('bg');
    const first = await deliver(single, id, 'L', 'background');
    expect(first.status).toBe(200);
    await peer.waitForRequests(1, '/background');
    const again = await deliver(single, id, 'L', 'background');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toBe('accepted');
    expect(peer.requestsTo('/background')).toHaveLength(1);
    expect(peer.requestsTo('/background')[0]!.headers['idempotency-key']).toBe(keyFor('background', id, 'relay'));
  });

  it('with --queue: remembered once the job is stored; the job runs once, with the same derived key', async (context) => {
    sharedRedis ??= await testRedisUrl();
    if (sharedRedis === null) return context.skip();
    const prefix = uniqueKeyPrefix('dedup-queue');
    prefixes.push(prefix);
    const queue = uniqueQueueName('dedup');
    prefixes.push(`bull:${queue}:`);
    const service = await services.start(FILE, ['--queue', sharedRedis, '--queue-name', queue, '--rate-limit-prefix', prefix], {
      PEER: peer.origin,
      ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY,
    });
    const id = fresh('queued');
    expect((await deliver(service, id, 'M', 'background')).status).toBe(200);
    const replays = await Promise.all(Array.from({ length: 3 }, () => deliver(service, id, 'M', 'background')));
    for (const r of replays) expect([r.status, r.body, r.headers.get('idempotent-replayed')]).toEqual([200, 'accepted', 'true']);
    await eventually(() => (peer.requestsTo('/background').length > 0 ? true : undefined), 'the queued job');
    await new Promise((r) => setTimeout(r, 300));
    expect(peer.requestsTo('/background')).toHaveLength(1);
    expect(peer.requestsTo('/background')[0]!.headers['idempotency-key']).toBe(keyFor('background', id, 'relay'));
    // One remembered key (beside the order and sizes of the endpoint's bound).
    expect((await keysUnder(sharedRedis, prefix)).filter((key) => !key.includes('dedup-remembered:')).length).toBe(1);
  });
});
