// The delivery log through the real binary (docs/deliveries.md): serve records every request
// routed to an endpoint in the embedded store, and `deliveries list|show|replay` read it back.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../cli/helpers.js';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

interface Task {
  id: string;
  state: string;
  attempts: number;
  error: string | null;
}
interface Delivery {
  id: string;
  endpoint: string;
  verdict: string;
  status: number;
  reason: string | null;
  replayOf: string | null;
  deduplicationKey: string | null;
  tasks: Task[];
  request: string;
}

const SECRET_MESSAGE = 'the-message-only-the-request-holds-7f3a';

async function deliveries(stateDir: string, ...args: string[]) {
  return run(['deliveries', ...args, '--state-dir', stateDir]);
}

async function list(stateDir: string, ...args: string[]): Promise<Delivery[]> {
  const r = await deliveries(stateDir, 'list', '--format', 'json', ...args);
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  return (JSON.parse(r.stdout) as { deliveries: Delivery[] }).deliveries;
}

async function show(stateDir: string, id: string): Promise<Delivery> {
  const r = await deliveries(stateDir, 'show', id, '--format', 'json');
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Delivery;
}

/** Until the batch that holds `id` has been written (every 100 ms). */
async function recorded(stateDir: string, id: string, done: (d: Delivery) => boolean = () => true): Promise<Delivery> {
  for (let i = 0; ; i++) {
    const r = await deliveries(stateDir, 'show', id, '--format', 'json');
    if (r.exitCode === 0) {
      const d = JSON.parse(r.stdout) as Delivery;
      if (done(d)) return d;
    }
    if (i > 60) throw new Error(`delivery ${id} was not recorded: ${r.stderr}${r.stdout}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function form(fields: Record<string, string>): { method: string; headers: Record<string, string>; body: string } {
  return { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() };
}

describe('the delivery log, embedded (SQLite in --state-dir)', () => {
  let peer: HttpPeer;
  let service: RunningService;
  let stateDir: string;

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/crm', { status: 200, body: 'ok' });
    peer.route('/relay', { status: 200, body: 'ok' });
    peer.route('/slow', { status: 200, body: 'ok' });
    stateDir = mkdtempSync(path.join(tmpdir(), 'es-deliveries-'));
    service = await startServe(fixture('deliveries'), ['--state-dir', stateDir], {
      PEER: peer.origin,
      ENDPOINT_SERVICE_DELIVERIES_KEY: undefined,
      ENDPOINT_SERVICE_QUEUE_KEY: undefined,
    });
  });

  afterAll(async () => {
    await service?.stop();
    await peer?.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('records each verdict with its status, reason and tasks, newest first', async () => {
    const ids: Record<string, string> = {};
    const send = async (name: string, url: string, init?: RequestInit) => {
      const response = await fetch(service.url + url, init);
      ids[name] = response.headers.get('x-request-id')!;
      return response;
    };
    expect((await send('accepted', '/contact', form({ name: 'Ada', message: SECRET_MESSAGE }))).status).toBe(200);
    expect((await send('refused', '/contact', form({ name: 'Ada' }))).status).toBe(400);
    expect((await send('spam', '/contact', form({ name: 'Bot', message: 'buy', website: 'http://spam.example' }))).status).toBe(200);
    expect((await send('first', '/limited')).status).toBe(200);
    expect((await send('limited', '/limited')).status).toBe(429);
    await recorded(stateDir, ids.limited!);

    const all = await list(stateDir);
    expect(all.map((d) => d.id)).toEqual([ids.limited, ids.first, ids.spam, ids.refused, ids.accepted]);
    const byId = new Map(all.map((d) => [d.id, d]));
    expect(byId.get(ids.accepted!)).toMatchObject({ endpoint: 'contact', verdict: 'accepted', status: 200, reason: null, request: 'sealed' });
    expect(byId.get(ids.accepted!)!.tasks).toEqual([expect.objectContaining({ id: 'crm', state: 'succeeded', attempts: 1, error: null })]);
    const refused = byId.get(ids.refused!)!;
    expect(refused).toMatchObject({ verdict: 'refused', status: 400, tasks: [] });
    expect(refused.reason).toEqual(expect.any(String));
    expect(byId.get(ids.spam!)).toMatchObject({ verdict: 'spam', status: 200, tasks: [] });
    expect(byId.get(ids.limited!)).toMatchObject({ verdict: 'limited', status: 429, reason: 'too many requests; try again later' });
    expect(peer.requestsTo('/crm')).toHaveLength(1);
    // Node 22 announces node:sqlite as experimental: neither serve nor the CLI passes that on.
    expect(service.stderr()).not.toContain('ExperimentalWarning');

    expect((await list(stateDir, '--verdict', 'spam')).map((d) => d.id)).toEqual([ids.spam]);
    expect((await list(stateDir, '--endpoint', 'limited')).map((d) => d.id)).toEqual([ids.limited, ids.first]);
    const text = await deliveries(stateDir, 'list');
    expect(text.stdout.split('\n')[0]).toContain(`${ids.limited}  limited  GET 429  limited`);
  });

  it('keeps the request sealed: not in the database file in clear, given back by --reveal', async () => {
    const response = await fetch(`${service.url}/contact`, form({ name: 'Grace', message: SECRET_MESSAGE }));
    const id = response.headers.get('x-request-id')!;
    await recorded(stateDir, id);
    for (const file of readdirSync(stateDir)) {
      if (file.startsWith('deliveries.db')) expect(readFileSync(path.join(stateDir, file)).includes(SECRET_MESSAGE)).toBe(false);
    }
    const listed = await deliveries(stateDir, 'list', '--format', 'json');
    expect(listed.stdout).not.toContain(SECRET_MESSAGE);
    expect(service.stderr()).not.toContain(SECRET_MESSAGE);
    const revealed = await deliveries(stateDir, 'show', id, '--reveal', '--format', 'json');
    expect(revealed.exitCode, revealed.stderr).toBe(0);
    const document = JSON.parse(revealed.stdout) as { revealed: { body: string; method: string; url: string } };
    expect(document.revealed).toMatchObject({ method: 'POST', url: '/contact' });
    expect(new URLSearchParams(document.revealed.body).get('message')).toBe(SECRET_MESSAGE);
  });

  it('records a deduplication replay as its own delivery with replayOf', async () => {
    const headers = { 'x-delivery-id': 'delivery-1', 'content-type': 'application/json' };
    const first = await fetch(`${service.url}/webhook`, { method: 'POST', headers, body: '{}' });
    const again = await fetch(`${service.url}/webhook`, { method: 'POST', headers, body: '{}' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const firstId = first.headers.get('x-request-id')!;
    const replayed = await recorded(stateDir, again.headers.get('x-request-id')!);
    expect(replayed).toMatchObject({ verdict: 'duplicate', status: 200, replayOf: firstId, deduplicationKey: 'delivery-1', tasks: [] });
    expect(await show(stateDir, firstId)).toMatchObject({ verdict: 'accepted', deduplicationKey: 'delivery-1', replayOf: null });
  });

  it('adds the outcome of a task that ends after the answer', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    peer.route('/slow', { status: 200, body: 'ok', hold: () => held });
    const response = await fetch(`${service.url}/later`, { method: 'POST' });
    const id = response.headers.get('x-request-id')!;
    expect((await recorded(stateDir, id)).tasks).toEqual([expect.objectContaining({ id: 'slow', state: 'pending' })]);
    release();
    const done = await recorded(stateDir, id, (d) => d.tasks[0]?.state !== 'pending');
    expect(done.tasks).toEqual([expect.objectContaining({ id: 'slow', state: 'succeeded', attempts: 1 })]);
  });

  it('replays a failed delivery once its upstream is fixed, as a new delivery with replayOf', async () => {
    peer.route('/crm', { status: 500, body: 'down' }, { status: 200, body: 'ok' });
    const before = peer.requestsTo('/crm').length;
    const response = await fetch(`${service.url}/contact`, form({ name: 'Lin', message: 'replay me' }));
    expect(response.status).toBeGreaterThanOrEqual(500);
    const id = response.headers.get('x-request-id')!;
    const failed = await recorded(stateDir, id);
    expect(failed.verdict).toBe('failed');
    expect(failed.tasks).toEqual([expect.objectContaining({ id: 'crm', state: 'failed' })]);

    const r = await deliveries(stateDir, 'replay', id, '--format', 'json');
    expect(r.exitCode, r.stderr).toBe(0);
    const replay = JSON.parse(r.stdout) as Delivery;
    expect(replay).toMatchObject({ replayOf: id, verdict: 'accepted', status: 200 });
    expect(replay.id).not.toBe(id);
    expect(replay.tasks).toEqual([expect.objectContaining({ id: 'crm', state: 'succeeded' })]);
    const calls = peer.requestsTo('/crm').slice(before);
    expect(calls).toHaveLength(2);
    expect(JSON.parse(calls[1]!.body)).toEqual({ name: 'Lin', message: 'replay me' });
  });

  it('releases spam by replay: the honeypot is not applied to it', async () => {
    const before = peer.requestsTo('/crm').length;
    const response = await fetch(`${service.url}/contact`, form({ name: 'Real', message: 'a person after all', website: 'autofilled' }));
    const id = response.headers.get('x-request-id')!;
    expect((await recorded(stateDir, id)).verdict).toBe('spam');
    expect(peer.requestsTo('/crm').length).toBe(before);
    const r = await deliveries(stateDir, 'replay', id, '--format', 'json');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ replayOf: id, verdict: 'accepted' });
    expect(peer.requestsTo('/crm').length).toBe(before + 1);
  });

  it('does not let a client mark its own request as a replay', async () => {
    const before = peer.requestsTo('/crm').length;
    const forged = `${'0'.repeat(64)} some-delivery`;
    const { headers, body } = form({ name: 'Bot', message: 'buy', website: 'http://spam.example' });
    const response = await fetch(`${service.url}/contact`, { method: 'POST', headers: { ...headers, 'x-endpoint-service-replay': forged }, body });
    const d = await recorded(stateDir, response.headers.get('x-request-id')!);
    expect(d).toMatchObject({ verdict: 'spam', replayOf: null });
    expect(peer.requestsTo('/crm').length).toBe(before);
  });

  it('answers an unknown id with exit 3 and one line', async () => {
    const r = await deliveries(stateDir, 'show', 'no-such-delivery');
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toBe('endpoint-service: there is no delivery no-such-delivery in the log\n');
    expect((await deliveries(stateDir, 'replay', 'no-such-delivery')).exitCode).toBe(3);
  });

  it('does not record probes or requests that match no endpoint', async () => {
    await fetch(`${service.url}/_health`);
    const response = await fetch(`${service.url}/nowhere`);
    expect(response.status).toBe(404);
    const id = response.headers.get('x-request-id')!;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await deliveries(stateDir, 'show', id)).exitCode).toBe(3);
  });
});

describe('--deliveries none', () => {
  it('records nothing and makes no state folder', async () => {
    const stateDir = path.join(mkdtempSync(path.join(tmpdir(), 'es-deliveries-')), 'state');
    const peer = await HttpPeer.start();
    const service = await startServe(fixture('deliveries'), ['--deliveries', 'none', '--state-dir', stateDir], { PEER: peer.origin });
    try {
      const response = await fetch(`${service.url}/limited`);
      expect(response.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const r = await deliveries(stateDir, 'list');
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe('no deliveries\n');
      expect(() => readdirSync(stateDir)).toThrow();
    } finally {
      await service.stop();
      await peer.close();
    }
  });
});

describe('--deliveries-max', () => {
  it('removes the oldest deliveries beyond it, at start and in the background, and says how many', async () => {
    const stateDir = mkdtempSync(path.join(tmpdir(), 'es-deliveries-'));
    const peer = await HttpPeer.start();
    const args = ['--state-dir', stateDir, '--deliveries-max', '2'];
    let service = await startServe(fixture('deliveries'), args, { PEER: peer.origin });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push((await fetch(`${service.url}/limited?n=${i}`)).headers.get('x-request-id')!);
      await recorded(stateDir, ids[3]!);
      await service.stop();
      service = await startServe(fixture('deliveries'), args, { PEER: peer.origin });
      expect(await service.waitForLog((l) => l.msg === 'old deliveries removed')).toMatchObject({ removed: 2 });
      expect((await list(stateDir)).map((d) => d.id)).toEqual([ids[3], ids[2]]);
    } finally {
      await service.stop();
      await peer.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
