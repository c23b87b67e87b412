// A public form's protections through the real binary, with real peers (an HttpPeer as the CRM,
// an SmtpPeer for mail): trusted proxies, the honeypot and rate limits in one process. Every
// refusal checks that the peers received nothing, and a request that passes shows they were
// reachable. The main service trusts one proxy hop (the test is that proxy), so each case keys
// its rate limits by a client address of its own.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, StartedServices, type RunningService } from '../helpers/serve.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';

const FIXTURE = fixture('protect');

let peer: HttpPeer;
let smtp: SmtpPeer;
let trusting: RunningService;
let plain: RunningService;
const services = new StartedServices();

beforeAll(async () => {
  peer = await HttpPeer.start();
  for (const path of ['/crm/contacts', '/crm/signups', '/crm/welcome', '/crm/limited', '/crm/newsletter']) peer.route(path, { status: 200, body: 'ok' });
  smtp = await SmtpPeer.start();
  const env = { PEER: peer.origin };
  [trusting, plain] = await Promise.all([
    services.start(FIXTURE, ['--smtp-url', smtp.url, '--trust-proxy', '1'], env),
    services.start(FIXTURE, ['--smtp-url', smtp.url], env),
  ]);
});
afterAll(async () => {
  await services.stopAll();
  await peer?.close();
  await smtp?.close();
});

type Pairs = readonly (readonly [string, string])[];
const encode = (pairs: Pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');

function post(service: RunningService, endpoint: string, pairs: Pairs, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${service.url}/${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: encode(pairs), redirect: 'manual' });
}

let nextClient = 10;
/** A client address of its own for each case: limits keyed by it start afresh. */
const freshClient = () => `192.0.2.${nextClient++}`;
const from = (address: string) => ({ 'x-forwarded-for': address });

async function metric(service: RunningService, line: RegExp): Promise<number> {
  const text = await (await fetch(`${service.url}/_metrics`)).text();
  const found = text.split('\n').find((l) => line.test(l));
  return found === undefined ? 0 : Number(found.slice(found.lastIndexOf(' ') + 1));
}

describe('--trust-proxy', () => {
  it('takes ${client-ip} from X-Forwarded-For as far as the hops are trusted', async () => {
    const one = await fetch(`${trusting.url}/whoami`, { headers: from('203.0.113.7') });
    expect(await one.text()).toBe('203.0.113.7');
    // One hop trusted: the address our proxy (the test) was given is the client, not the one before it.
    const two = await fetch(`${trusting.url}/whoami`, { headers: from('198.51.100.1, 203.0.113.9') });
    expect(await two.text()).toBe('203.0.113.9');
    const forwarded = await fetch(`${trusting.url}/whoami`, { headers: { forwarded: 'for="[2001:db8::1]:4711";proto=https' } });
    expect(await forwarded.text()).toBe('2001:db8::1');
    const none = await fetch(`${trusting.url}/whoami`);
    expect(await none.text()).toBe('127.0.0.1');
  });

  it('without the option, a forged X-Forwarded-For changes nothing', async () => {
    const forged = await fetch(`${plain.url}/whoami`, { headers: from('203.0.113.7') });
    expect(await forged.text()).toBe('127.0.0.1');
  });

  it('refuses a value that is neither hops nor addresses, before it starts', async () => {
    const { runServeToExit } = await import('../helpers/serve.js');
    const result = await runServeToExit(FIXTURE, ['--trust-proxy', '10.0.0.0/99', '--port', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--trust-proxy');
  });
});

describe('<honeypot>', () => {
  it('answers a filled trap exactly as the success, and nothing reaches the CRM or the mail server', async () => {
    const before = { http: peer.requests.length, mails: smtp.messages.length, caught: await metric(trusting, /^endpoint_service_guard_outcomes_total\{endpoint="contact",check="honeypot",outcome="caught"\}/) };
    const trapped = await post(trusting, 'contact', [['name', 'Bot'], ['email', 'bot@example.test'], ['website', 'http://spam.example/buy-now']]);
    expect(trapped.status).toBe(200);
    expect(trapped.headers.get('content-type')).toBe('text/plain');
    expect(await trapped.text()).toBe('thanks Bot');

    // A person's request, with the trap left empty as browsers send it, goes through.
    const person = await post(trusting, 'contact', [['name', 'Ada'], ['email', 'ada@example.test'], ['website', '']]);
    expect(person.status).toBe(200);
    expect(await person.text()).toBe('thanks Ada');
    await smtp.waitForMessages(before.mails + 1);
    const calls = peer.requests.slice(before.http);
    expect(calls.map((r) => r.path)).toEqual(['/crm/contacts']);
    expect(calls[0]!.body).toContain('Ada');
    expect(smtp.messages.slice(before.mails).map((m) => m.parsed.subject)).toEqual(['Contact from Ada']);

    expect(await metric(trusting, /^endpoint_service_guard_outcomes_total\{endpoint="contact",check="honeypot",outcome="caught"\}/)).toBe(before.caught + 1);
    const caught = trusting.logs().filter((l) => l.check === 'honeypot');
    expect(caught.length).toBeGreaterThan(0);
    expect(trusting.stderr()).not.toContain('spam.example');
  });

  it('catches a trap filled with only a space, or sent as a file part, and still lets an empty file input through', async () => {
    const caughtLine = /^endpoint_service_guard_outcomes_total\{endpoint="contact",check="honeypot",outcome="caught"\}/;
    const before = { http: peer.requestsTo('/crm/contacts').length, caught: await metric(trusting, caughtLine) };
    const spaced = await post(trusting, 'contact', [['name', 'Bot'], ['email', 'bot@example.test'], ['website', ' ']]);
    expect(spaced.status).toBe(200);
    expect(await spaced.text()).toBe('thanks Bot');

    const asFile = new FormData();
    asFile.append('name', 'Bot');
    asFile.append('email', 'bot@example.test');
    asFile.append('website', new Blob(['http://spam.example/']), 'site.txt');
    const filed = await fetch(`${trusting.url}/contact`, { method: 'POST', body: asFile });
    expect(filed.status).toBe(200);
    expect(await filed.text()).toBe('thanks Bot');
    expect(await metric(trusting, caughtLine)).toBe(before.caught + 2);

    // A browser sends a file input left empty as a nameless, empty part: not filled.
    const boundary = 'honeypot-boundary';
    const body =
      `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="email"\r\n\r\nada@example.test\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="website"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--${boundary}--\r\n`;
    const person = await fetch(`${trusting.url}/contact`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
    expect(person.status).toBe(200);
    await peer.waitForRequests(before.http + 1, '/crm/contacts');
    expect(peer.requestsTo('/crm/contacts').length).toBe(before.http + 1);
    expect(await metric(trusting, caughtLine)).toBe(before.caught + 2);
  });

  it('holds for a folder\'s endpoints, and a forward\'s target starts no task either', async () => {
    const before = peer.requests.length;
    const trapped = await post(trusting, 'signup', [['email', 'bot@example.test'], ['homepage', 'x']]);
    expect(trapped.status).toBe(302);
    expect(trapped.headers.get('location')).toBe('https://example.test/welcome');
    const person = await post(trusting, 'signup', [['email', 'ada@example.test']]);
    expect(person.status).toBe(302);
    await peer.waitForRequests(before + 2);
    expect(peer.requests.slice(before).map((r) => r.path).sort()).toEqual(['/crm/signups', '/crm/welcome']);
    expect(peer.requests.slice(before).every((r) => r.body.includes('ada%40example.test'))).toBe(true);
  });
});

describe('<rate-limit> in one process', () => {
  it('answers the (N+1)th request in the window 429 with Retry-After and the RateLimit fields, and runs nothing', async () => {
    const client = freshClient();
    const before = peer.requestsTo('/crm/limited').length;
    for (let i = 0; i < 3; i++) expect((await post(trusting, 'limited', [], from(client))).status).toBe(200);
    const over = await post(trusting, 'limited', [], from(client));
    expect(over.status).toBe(429);
    expect(over.headers.get('content-type')).toBe('application/problem+json');
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(over.headers.get('ratelimit-policy')).toBe('"3-per-1m";q=3;w=60');
    expect(over.headers.get('ratelimit')).toBe(`"3-per-1m";r=0;t=${retryAfter}`);
    // Another client is not affected: the limit is per address.
    expect((await post(trusting, 'limited', [], from(freshClient()))).status).toBe(200);
    await peer.waitForRequests(before + 4, '/crm/limited');
    const clients = peer.requestsTo('/crm/limited').slice(before).map((r) => new URLSearchParams(r.body).get('client'));
    expect(clients.filter((c) => c === client)).toHaveLength(3);
    expect(await metric(trusting, /^endpoint_service_guard_outcomes_total\{endpoint="limited",check="rate-limit",outcome="limited"\}/)).toBeGreaterThanOrEqual(1);
  });

  it('answers 429 before the body is read', async () => {
    const client = freshClient();
    for (let i = 0; i < 3; i++) expect((await post(trusting, 'limited', [], from(client))).status).toBe(200);
    // Headers announce a body that never comes: only a check made before reading it can answer.
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${trusting.url}/limited`);
      const request = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '1000', ...from(client) } });
      request.on('response', (response) => {
        response.resume();
        resolve(response.statusCode!);
        request.destroy();
      });
      request.on('error', reject);
      request.flushHeaders();
    });
    expect(status).toBe(429);
  });

  it('without --trust-proxy a forged X-Forwarded-For does not make a new client', async () => {
    // The plain service keys by the socket's address (127.0.0.1) whatever the header says.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(plain, 'limited', [], from(freshClient()))).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('frees the window again once it has passed', async () => {
    const client = freshClient();
    expect((await post(trusting, 'short-window', [], from(client))).status).toBe(200);
    const over = await post(trusting, 'short-window', [], from(client));
    expect(over.status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, Number(over.headers.get('retry-after')) * 1000));
    let status = 429;
    // The window ends within a second of Retry-After (it is rounded up); ask until it has.
    for (let i = 0; i < 20 && status === 429; i++) {
      status = (await post(trusting, 'short-window', [], from(client))).status;
      if (status === 429) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(status).toBe(200);
  });

  it('burst="2" lets two more through above the limit, then refuses', async () => {
    const client = freshClient();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(trusting, 'bursty', [], from(client))).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('by="parameter:email" limits per address, whichever client sends it', async () => {
    const before = peer.requestsTo('/crm/newsletter').length;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await post(trusting, 'per-email', [['email', 'ada@example.test']], from(freshClient()))).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await post(trusting, 'per-email', [['email', 'bob@example.test']], from(freshClient()))).status).toBe(200);
    // Parameters are checked before the limit: an invalid address is a 400 and uses up nothing.
    expect((await post(trusting, 'per-email', [['email', 'not-an-address']], from(freshClient()))).status).toBe(400);
    await peer.waitForRequests(before + 3, '/crm/newsletter');
    const emails = peer.requestsTo('/crm/newsletter').slice(before).map((r) => new URLSearchParams(r.body).get('email'));
    expect(emails.sort()).toEqual(['ada@example.test', 'ada@example.test', 'bob@example.test']);
  });
});
