// A task's request redirected to another origin (scheme, host or port) must not take the
// author's headers and the body with it: got strips only Authorization, Cookie and Host, and
// keeps a POST and its body on 301, 302, 307 and 308. Through the real binary with two real
// peers on different ports; each counts what it received, so "nothing went there" is measured.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { StartedServices, type RunningService } from '../helpers/serve.js';
import { RELIABILITY_FIXTURES } from './raw.js';

const APP = `${RELIABILITY_FIXTURES}redirects/endpoints.xml`;
const API_KEY = 'key-for-the-first-origin-only';
const EMAIL = 'visitor@example.test';

const services = new StartedServices();
let first: HttpPeer;
let second: HttpPeer;

beforeAll(async () => {
  first = await HttpPeer.start();
  second = await HttpPeer.start();
  second.route('/collect', { status: 200, body: 'collected' });
  first.route('/collect', { status: 200, body: 'collected' });
  for (const status of [301, 302, 307, 308]) {
    first.route(`/away-${status}`, { status, headers: { location: second.url('/collect') } });
    first.route(`/same-${status}`, { status, headers: { location: '/collect' } });
  }
  // The same port under another name: another origin too.
  first.route('/renamed', () => ({ status: 307, headers: { location: `http://localhost:${first.port}/collect` } }));
  first.route('/elsewhere', () => ({ status: 307, headers: { location: `http://localhost:${second.port}/collect` } }));
});
afterAll(async () => {
  await services.stopAll();
  await first?.close();
  await second?.close();
});

function subscribe(service: RunningService, hop: string): Promise<Response> {
  return fetch(`${service.url}/subscribe`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ hop, email: EMAIL }).toString() });
}

async function taskLine(service: RunningService, response: Response): Promise<Record<string, unknown>> {
  const requestId = response.headers.get('x-request-id');
  return service.waitForLog((l) => l.msg === 'task' && l.requestId === requestId);
}

describe('a redirect to another origin', () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await services.start(APP, [], { FIRST: first.origin, API_KEY });
  });

  it.each([301, 302, 307, 308])('%i to another port is not followed: the second peer receives nothing, the task fails with cross-origin-redirect', async (status) => {
    const sent = first.requestsTo(`/away-${status}`).length;
    const response = await subscribe(service, `away-${status}`);
    expect(response.status).toBe(502);
    await response.arrayBuffer();
    // The first origin got the request, key and body: it is the one the author named.
    const asked = first.requestsTo(`/away-${status}`).slice(sent);
    expect(asked.length).toBe(1);
    expect(asked[0]!.headers['x-api-key']).toBe(API_KEY);
    const line = await taskLine(service, response);
    expect(line.outcome).toBe('failed');
    expect(line.code).toBe('cross-origin-redirect');
    expect(String(line.error)).toContain(`to another origin, http://127.0.0.1:${second.port}`);
    expect(String(line.error)).not.toContain(API_KEY);
    expect(second.connections).toBe(0);
    expect(second.requests.length).toBe(0);
  });

  it('to the same port under another host name is not followed either', async () => {
    const collected = first.requestsTo('/collect').length;
    const response = await subscribe(service, 'renamed');
    expect(response.status).toBe(502);
    await response.arrayBuffer();
    expect((await taskLine(service, response)).code).toBe('cross-origin-redirect');
    expect(first.requestsTo('/collect').length).toBe(collected);
  });

  it.each([301, 302, 307, 308])('%i to the same origin is followed as before, key and body included', async (status) => {
    const collected = first.requestsTo('/collect').length;
    const response = await subscribe(service, `same-${status}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('subscribed');
    const arrived = first.requestsTo('/collect').slice(collected);
    expect(arrived.length).toBe(1);
    expect(arrived[0]!.method).toBe('POST');
    expect(arrived[0]!.headers['x-api-key']).toBe(API_KEY);
    expect(JSON.parse(arrived[0]!.body)).toEqual({ email: EMAIL });
  });
});

describe('with --allow-task-host naming the target', () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await services.start(APP, ['--allow-task-host', '127.0.0.1'], { FIRST: first.origin, API_KEY });
  });

  it('307 to another port is followed with the method and the body, without the headers the author wrote', async () => {
    const before = second.requestsTo('/collect').length;
    const response = await subscribe(service, 'away-307');
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('subscribed');
    const arrived = second.requestsTo('/collect').slice(before);
    expect(arrived.length).toBe(1);
    expect(arrived[0]!.method).toBe('POST');
    expect(JSON.parse(arrived[0]!.body)).toEqual({ email: EMAIL });
    expect(arrived[0]!.headers['content-type']).toBe('application/json');
    expect(arrived[0]!.headers['idempotency-key']).toMatch(/^[0-9a-f]{32}$/);
    expect(arrived[0]!.headers['x-api-key']).toBeUndefined();
    expect(JSON.stringify(arrived[0]!.headers)).not.toContain(API_KEY);
    expect((await taskLine(service, response)).outcome).toBe('succeeded');
  });

  it('a redirect to a host the list does not name is still refused by the list (host-not-allowed), before connecting', async () => {
    const before = second.requests.length;
    const connections = second.connections;
    const response = await subscribe(service, 'elsewhere');
    expect(response.status).toBe(502);
    await response.arrayBuffer();
    const line = await taskLine(service, response);
    expect(line.code).toBe('host-not-allowed');
    expect(String(line.error)).toMatch(/redirect refused: the host "localhost" is not allowed/);
    expect(second.requests.length).toBe(before);
    expect(second.connections).toBe(connections);
  });
});
