// "Side effects only for requests that will succeed", through the real binary with real peers
// (an HttpPeer as the CRM, an SmtpPeer for mail): parameter rules, preparation before the first
// side effect, the origin check with --cors, Idempotency-Key on POST/PATCH tasks, and the HTML
// error page for browsers. Every refusal checks that neither peer received anything, and then
// sends a valid request through the same service to show that the peers were reachable and that
// only that request's calls and mail arrived (so "nothing arrived" was not a broken fixture, nor
// a refused request's call that was merely late).
import { createHash } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dryRun } from '../dry-run/run.js';
import { HttpPeer, type RecordedRequest } from '../helpers/http-peer.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';

const FIXTURE = fixture('integrity');
/** What a browser sends when it navigates or posts a form. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};
const HEX32 = /^[0-9a-f]{32}$/;

let peer: HttpPeer;
let smtp: SmtpPeer;
let service: RunningService;

beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/crm/contacts', { status: 201, json: { id: 'C-1' } });
  peer.route('/crm/notes', { status: 201, body: 'noted' });
  peer.route('/crm/replies', { status: 200, body: 'recorded' });
  peer.route('/crm/flaky', { status: 200, body: 'stored' });
  peer.route('/crm/keyed', { status: 200, body: 'stored' });
  peer.route('/crm/patch', { status: 200, body: 'patched' });
  peer.route('/crm/lookup', { status: 200, body: 'found' });
  smtp = await SmtpPeer.start();
  service = await startServe(FIXTURE, ['--smtp-url', smtp.url], { PEER: peer.origin });
});
afterAll(async () => {
  await service?.stop();
  await peer?.close();
  await smtp?.close();
});

// ---------------------------------------------------------------------------------------------
// Helpers

type Pairs = readonly (readonly [string, string])[];

/** application/x-www-form-urlencoded with %20 for a space, as written in the cases below. */
const encode = (pairs: Pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');

function post(target: RunningService, endpoint: string, pairs: Pairs, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${target.url}/${endpoint}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: encode(pairs),
  });
}

function get(target: RunningService, endpoint: string, pairs: Pairs, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${target.url}/${endpoint}?${encode(pairs)}`, { headers });
}

/** The key the service must derive for a task: sha256(request id, endpoint, task id), first 32 hex. */
const expectedKey = (requestId: string, endpoint: string, taskId: string) =>
  createHash('sha256').update(`${requestId}\n${endpoint}\n${taskId}`).digest('hex').slice(0, 32);

interface Mark {
  readonly http: number;
  readonly mails: number;
  readonly recipients: number;
}

const mark = (): Mark => ({ http: peer.requests.length, mails: smtp.messages.length, recipients: smtp.recipientsTried.length });

let sentinels = 0;

/**
 * Nothing reached either peer since `before`; then a valid contact request through `target`
 * reaches both, and exactly its own two CRM calls and one mail arrive.
 */
async function expectNothingSentSince(before: Mark, target: RunningService = service): Promise<void> {
  expect(peer.requests.slice(before.http).map((r) => `${r.method} ${r.url}`)).toEqual([]);
  expect(smtp.recipientsTried.length).toBe(before.recipients);
  expect(smtp.messages.length).toBe(before.mails);

  const email = `sentinel-${++sentinels}@example.test`;
  const response = await post(target, 'contact', [
    ['name', 'Sentinel'],
    ['email', email],
    ['message', 'still here'],
  ]);
  expect(response.status).toBe(200);
  await smtp.waitForMessages(before.mails + 1);
  const calls = peer.requests.slice(before.http);
  expect(calls.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /crm/contacts', 'POST /crm/notes']);
  for (const call of calls) expect((JSON.parse(call.body) as { email: string }).email).toBe(email);
  expect(smtp.messages.slice(before.mails).map((m) => m.parsed.replyTo?.text)).toEqual([email]);
  expect(smtp.recipientsTried.slice(before.recipients)).toEqual(['office@example.test']);
}

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  requestId: string;
  errors?: { parameter: string; detail: string }[];
}

/** GET with a path sent exactly as written (fetch would percent-encode `<`, `"` and `'`). */
function rawGet(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: hostname, port: Number(port), path, method: 'GET', headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

function expectSecurityHeaders(headers: Headers | http.IncomingHttpHeaders): void {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) {
    const actual = headers instanceof Headers ? headers.get(name) : headers[name];
    expect(actual, name).toBe(value);
  }
}

// ---------------------------------------------------------------------------------------------
// The contact form: rules refuse the request before the CRM or the mail server hear of it.

const VALID: Pairs = [
  ['name', 'Ann'],
  ['email', 'ann@example.test'],
  ['message', 'Hello there'],
];
const BAD_EMAIL = 'not-an-email-7f3a';
/** 29 characters; the fixture allows 20. */
const LONG_MESSAGE = 'LONG-MESSAGE-abcdefghijklmnop';
const ERR = {
  name: { parameter: 'name', detail: 'missing required parameter "name"' },
  email: { parameter: 'email', detail: 'parameter "email" is not one email address' },
  message: { parameter: 'message', detail: 'parameter "message" is longer than 20 characters' },
};

const withValue = (name: string, value: string): Pairs => VALID.map(([k, v]) => [k, k === name ? value : v] as const);

interface Refusal {
  readonly label: string;
  readonly params: Pairs;
  readonly errors: readonly { parameter: string; detail: string }[];
  readonly detail: string;
  /** Request values that must not come back in any answer. */
  readonly secrets: readonly string[];
}

// A lone bad address would also be refused by the mail task's preparation, with the same
// detail; two addresses tell them apart (preparation says "holds several email addresses"), so
// that case and "all three at once" are the ones that pin the format rule itself.
const CONTACT_REFUSALS: readonly Refusal[] = [
  { label: 'an empty name (name=)', params: withValue('name', ''), errors: [ERR.name], detail: ERR.name.detail, secrets: [] },
  { label: 'a whitespace-only name (name=%20)', params: withValue('name', ' '), errors: [ERR.name], detail: ERR.name.detail, secrets: [] },
  { label: 'a name of tabs and line breaks', params: withValue('name', '\t\r\n '), errors: [ERR.name], detail: ERR.name.detail, secrets: [] },
  { label: 'an email that is not an address', params: withValue('email', BAD_EMAIL), errors: [ERR.email], detail: ERR.email.detail, secrets: [BAD_EMAIL] },
  { label: 'an email holding two addresses', params: withValue('email', 'ann@example.test, eve@evil.example'), errors: [ERR.email], detail: ERR.email.detail, secrets: ['eve@evil.example'] },
  { label: 'a message longer than max-length', params: withValue('message', LONG_MESSAGE), errors: [ERR.message], detail: ERR.message.detail, secrets: [LONG_MESSAGE] },
  {
    label: 'all three at once (sent in reverse order)',
    params: [
      ['message', LONG_MESSAGE],
      ['email', BAD_EMAIL],
      ['name', ' '],
    ],
    errors: [ERR.name, ERR.email, ERR.message],
    detail: '3 parameters are missing or not valid: "name", "email", "message"',
    secrets: [BAD_EMAIL, LONG_MESSAGE],
  },
];

describe('parameter rules on a contact form (serve)', () => {
  it('a valid request creates the contact, adds the note after it, and mails the office last', async () => {
    const before = mark();
    const response = await post(service, 'contact', VALID);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('thanks Ann');
    await smtp.waitForMessages(before.mails + 1);

    const calls = peer.requests.slice(before.http);
    expect(calls.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /crm/contacts', 'POST /crm/notes']);
    expect(JSON.parse(calls[0]!.body)).toEqual({ name: 'Ann', email: 'ann@example.test' });
    expect(JSON.parse(calls[1]!.body)).toEqual({ email: 'ann@example.test', text: 'Hello there' });

    const mails = smtp.messages.slice(before.mails);
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail.envelope.to).toEqual(['office@example.test']);
    expect(mail.parsed.replyTo?.text).toBe('ann@example.test');
    expect(mail.parsed.subject).toBe('Contact from Ann');
    expect(mail.parsed.text?.trim()).toBe('Hello there');
    // Ordering, not timing (both clocks are this process's): the note had been answered when the
    // mail arrived, which takes several SMTP round trips started only after the note's task.
    expect(calls[1]!.endedAt).not.toBeNull();
    expect(mail.receivedAt).toBeGreaterThan(calls[1]!.endedAt!);
  });

  it.each(CONTACT_REFUSALS)('$label: 400 before anything runs, every failing parameter listed, no value echoed', async ({ params, errors, detail, secrets }) => {
    const before = mark();
    const response = await post(service, 'contact', params);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    const text = await response.text();
    const body = JSON.parse(text) as Problem;
    expect(body).toEqual({ type: 'about:blank', title: 'Bad Request', status: 400, detail, requestId: response.headers.get('x-request-id'), errors });
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(encodeURIComponent(secret));
    }
    await expectNothingSentSince(before);
  });

  it('the same rules hold for a query string and for a multipart form (as a browser posts it)', async () => {
    const before = mark();
    const viaQuery = await get(service, 'contact', withValue('email', BAD_EMAIL));
    expect(viaQuery.status).toBe(400);
    expect(((await viaQuery.json()) as Problem).errors).toEqual([ERR.email]);

    const form = new FormData();
    form.append('name', '');
    form.append('email', BAD_EMAIL);
    form.append('message', 'Hi');
    const viaMultipart = await fetch(`${service.url}/contact`, { method: 'POST', body: form });
    expect(viaMultipart.status).toBe(400);
    const text = await viaMultipart.text();
    expect((JSON.parse(text) as Problem).errors).toEqual([ERR.name, ERR.email]);
    expect(text).not.toContain(BAD_EMAIL);
    await expectNothingSentSince(before);
  });

  it('a value exactly at max-length, and one with surrounding spaces in name, are accepted', async () => {
    const before = mark();
    const response = await post(service, 'contact', [
      ['name', ' Ann '],
      ['email', 'ann@example.test'],
      ['message', 'x'.repeat(20)],
    ]);
    expect(response.status).toBe(200);
    await smtp.waitForMessages(before.mails + 1);
    expect(peer.requests.slice(before.http).map((r) => r.path)).toEqual(['/crm/contacts', '/crm/notes']);
  });
});

// ---------------------------------------------------------------------------------------------
// A value only a task can judge: prepared before the first side effect.

const REPLY_REFUSALS = [
  { label: 'no address at all', reply: 'nobody-here-5c1d', detail: 'parameter "reply" is not one email address' },
  { label: 'two addresses', reply: 'a@example.test, nobody-here-5c1d@evil.example', detail: 'parameter "reply" holds several email addresses' },
] as const;

describe('preparation before the first side effect (serve)', () => {
  it('a valid reply-to: the CRM call is made, then the mail is sent with it (the control)', async () => {
    const before = mark();
    const response = await post(service, 'reply', [
      ['name', 'Ann'],
      ['reply', 'r@example.test'],
    ]);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('sent');
    await smtp.waitForMessages(before.mails + 1);
    const calls = peer.requests.slice(before.http);
    expect(calls.map((r) => `${r.method} ${r.path} ${r.body}`)).toEqual(['POST /crm/replies name=Ann']);
    expect(smtp.messages.slice(before.mails).map((m) => m.parsed.replyTo?.text)).toEqual(['r@example.test']);
  });

  it.each(REPLY_REFUSALS)('a reply-to holding $label: 400 naming "reply", and the CRM call that comes first is not made', async ({ reply, detail }) => {
    const before = mark();
    const response = await post(service, 'reply', [
      ['name', 'Ann'],
      ['reply', reply],
    ]);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    const text = await response.text();
    const body = JSON.parse(text) as Problem;
    expect(body.detail).toBe(detail);
    expect(body.errors).toEqual([{ parameter: 'reply', detail }]);
    expect(text).not.toContain('nobody-here');
    await expectNothingSentSince(before);
  });

  it('a line break in the reply-to: 400 naming "reply", nothing sent', async () => {
    const before = mark();
    const response = await post(service, 'reply', [
      ['name', 'Ann'],
      ['reply', 'r@example.test\r\nBcc: victim@evil.example'],
    ]);
    expect(response.status).toBe(400);
    const text = await response.text();
    const body = JSON.parse(text) as Problem;
    expect(body.errors?.map((e) => e.parameter)).toEqual(['reply']);
    expect(text).not.toContain('victim');
    await expectNothingSentSince(before);
  });
});

// ---------------------------------------------------------------------------------------------
// dry-run: the same 400 for the same values, and no request printed.

const DRY_ENV = { PEER: 'http://127.0.0.1:9' };
const dryParams = (pairs: Pairs) => pairs.flatMap(([k, v]) => ['--param', `${k}=${v}`]);

describe('dry-run gives the same refusal', () => {
  it('a valid contact request: exit 0, and the plan prints both CRM calls and the mail (the control)', async () => {
    const run = await dryRun([FIXTURE, '--endpoint', 'contact', ...dryParams(VALID)], DRY_ENV);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^\s+POST \*\*\*\/crm\/contacts$/m);
    expect(run.stdout).toMatch(/^\s+POST \*\*\*\/crm\/notes$/m);
    // The key serve would send, for dry-run's request id.
    expect(run.stdout).toContain(`idempotency-key: ${expectedKey('dry-run', 'contact', 'create-contact')}\n`);
    expect(run.stdout).toContain(`idempotency-key: ${expectedKey('dry-run', 'contact', 'add-note')}\n`);
    expect(run.stdout).toContain('Subject: Contact from Ann');
    expect(run.stdout).toContain('[runs]');
  });

  it.each(CONTACT_REFUSALS)('$label: exit 1, the detail serve gives on stderr, no request printed', async ({ params, detail, secrets }) => {
    const run = await dryRun([FIXTURE, '--endpoint', 'contact', ...dryParams(params)], DRY_ENV);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(`error: endpoint "contact": the request fails with status 400: ${detail}\n`);
    expect(run.stdout).toContain(`request fails: ${detail}\n`);
    expect(run.stdout).not.toMatch(/^\s+(POST|GET|PATCH) /m);
    expect(run.stdout).not.toContain('Subject:');
    expect(run.stdout).not.toContain('idempotency-key');
    expect(run.stdout).not.toContain('[runs]');
    for (const secret of secrets) expect(run.stderr).not.toContain(secret);
  });

  it('a valid reply-to: exit 0, the CRM call and the mail are printed (the control)', async () => {
    const run = await dryRun([FIXTURE, '--endpoint', 'reply', '--param', 'name=Ann', '--param', 'reply=r@example.test'], DRY_ENV);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^\s+POST \*\*\*\/crm\/replies$/m);
    expect(run.stdout).toContain('Reply-To: r@example.test');
  });

  it.each(REPLY_REFUSALS)('a reply-to holding $label: exit 1 with the detail serve gives, no request printed', async ({ reply, detail }) => {
    const run = await dryRun([FIXTURE, '--endpoint', 'reply', '--param', 'name=Ann', '--param', `reply=${reply}`], DRY_ENV);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(`error: endpoint "reply": the request fails with status 400: ${detail}\n`);
    expect(run.stdout).not.toMatch(/^\s+POST /m);
    expect(run.stdout).not.toContain('Reply-To:');
    expect(run.stdout).not.toContain('Subject:');
    expect(run.stderr).not.toContain('nobody-here');
  });

  it('serve and dry-run give the same detail for the same values', async () => {
    for (const { params } of [CONTACT_REFUSALS[1]!, CONTACT_REFUSALS.at(-1)!]) {
      const answer = (await (await post(service, 'contact', params)).json()) as Problem;
      const run = await dryRun([FIXTURE, '--endpoint', 'contact', ...dryParams(params)], DRY_ENV);
      expect(run.stderr).toContain(`the request fails with status ${answer.status}: ${answer.detail}\n`);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// --cors: a request from a page of another origin is refused before anything runs.

describe('--cors https://app.example', () => {
  let cors: RunningService;
  beforeAll(async () => {
    cors = await startServe(FIXTURE, ['--smtp-url', smtp.url, '--cors', 'https://app.example'], { PEER: peer.origin });
  });
  afterAll(async () => {
    await cors?.stop();
  });

  it.each([
    ['POST', 'https://evil.example'],
    ['GET', 'https://evil.example'],
    ['POST', 'null'],
    ['POST', 'https://app.example.evil.example'],
    ['POST', 'http://app.example'],
  ])('%s with Origin %s: 403 and no peer hears of it', async (method, origin) => {
    const before = mark();
    const response = method === 'POST' ? await post(cors, 'contact', VALID, { origin }) : await get(cors, 'contact', VALID, { origin });
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(((await response.json()) as Problem).detail).toBe(`origin ${origin} is not allowed`);
    await expectNothingSentSince(before, cors);
  });

  it('a foreign Origin is refused before the parameters are looked at (403, not 400)', async () => {
    const before = mark();
    const response = await post(cors, 'contact', [['email', BAD_EMAIL]], { origin: 'https://evil.example' });
    expect(response.status).toBe(403);
    expect(await response.text()).not.toContain(BAD_EMAIL);
    await expectNothingSentSince(before, cors);
  });

  it('Origin https://app.example: the request succeeds and the peers get the calls and the mail', async () => {
    const before = mark();
    const response = await post(cors, 'contact', VALID, { origin: 'https://app.example' });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example');
    await smtp.waitForMessages(before.mails + 1);
    expect(peer.requests.slice(before.http).map((r) => r.path)).toEqual(['/crm/contacts', '/crm/notes']);
    expect(smtp.messages.length).toBe(before.mails + 1);
  });

  it('no Origin (curl, servers): the request succeeds', async () => {
    const before = mark();
    const response = await post(cors, 'contact', VALID);
    expect(response.status).toBe(200);
    await smtp.waitForMessages(before.mails + 1);
    expect(peer.requests.slice(before.http).map((r) => r.path)).toEqual(['/crm/contacts', '/crm/notes']);
  });

  it("the service's own origin (a page of the service posting to itself): the request succeeds", async () => {
    const before = mark();
    const response = await post(cors, 'contact', VALID, { origin: cors.url });
    expect(response.status).toBe(200);
    await smtp.waitForMessages(before.mails + 1);
    expect(peer.requests.slice(before.http).map((r) => r.path)).toEqual(['/crm/contacts', '/crm/notes']);
  });

  it('an origin written otherwise on the command line (case, default port) matches what browsers send', async () => {
    const written = await startServe(FIXTURE, ['--smtp-url', smtp.url, '--cors', 'https://App.Example:443'], { PEER: peer.origin });
    try {
      const before = mark();
      const response = await post(written, 'contact', VALID, { origin: 'https://app.example' });
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example');
      await smtp.waitForMessages(before.mails + 1);
    } finally {
      await written.stop();
    }
  });

  it('a hostile Origin in a browser request is escaped in the HTML page', async () => {
    const before = mark();
    const origin = `https://evil.example/"><script>alert('x')</script>&`;
    const response = await post(cors, 'contact', VALID, { origin, accept: BROWSER_ACCEPT });
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expectSecurityHeaders(response.headers);
    const page = await response.text();
    expect(page).not.toContain('<script>');
    expect(page).toContain('Origin https://evil.example/&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp; is not allowed.');
    await expectNothingSentSince(before, cors);
  });
});

// ---------------------------------------------------------------------------------------------
// Idempotency-Key

describe('Idempotency-Key', () => {
  const keysOf = (requests: readonly RecordedRequest[]) => requests.map((r) => r.headers['idempotency-key']);

  it('a POST retried after two 503s sends the same key on every attempt, derived from request id, endpoint and task', async () => {
    const retryNow = { 'retry-after': '0' };
    peer.route('/crm/flaky', { status: 503, headers: retryNow, body: 'busy' }, { status: 503, headers: retryNow, body: 'busy' }, { status: 200, body: 'stored' });
    const before = peer.requestsTo('/crm/flaky').length;
    const response = await fetch(`${service.url}/flaky`);
    expect(response.status).toBe(200);
    const attempts = peer.requestsTo('/crm/flaky').slice(before);
    expect(attempts.map((r) => r.method)).toEqual(['POST', 'POST', 'POST']);
    const keys = keysOf(attempts);
    expect(keys[0]).toMatch(HEX32);
    expect(keys).toEqual([keys[0], keys[0], keys[0]]);
    expect(keys[0]).toBe(expectedKey(response.headers.get('x-request-id')!, 'flaky', 'store'));
    peer.route('/crm/flaky', { status: 200, body: 'stored' });
  });

  it('two requests send different keys', async () => {
    const before = peer.requestsTo('/crm/flaky').length;
    const first = await fetch(`${service.url}/flaky`);
    const second = await fetch(`${service.url}/flaky`);
    expect([first.status, second.status]).toEqual([200, 200]);
    const keys = keysOf(peer.requestsTo('/crm/flaky').slice(before));
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(HEX32);
    expect(keys[1]).toMatch(HEX32);
    expect(keys[0]).not.toBe(keys[1]);
    expect(keys).toEqual([expectedKey(first.headers.get('x-request-id')!, 'flaky', 'store'), expectedKey(second.headers.get('x-request-id')!, 'flaky', 'store')]);
  });

  it('two POST tasks of one request send different keys', async () => {
    const before = mark();
    const response = await post(service, 'contact', VALID);
    expect(response.status).toBe(200);
    await smtp.waitForMessages(before.mails + 1);
    const requestId = response.headers.get('x-request-id')!;
    const [contact, note] = peer.requests.slice(before.http);
    expect(contact!.headers['idempotency-key']).toBe(expectedKey(requestId, 'contact', 'create-contact'));
    expect(note!.headers['idempotency-key']).toBe(expectedKey(requestId, 'contact', 'add-note'));
    expect(contact!.headers['idempotency-key']).not.toBe(note!.headers['idempotency-key']);
  });

  it("the author's <request-header name=\"Idempotency-Key\"> is sent exactly as written", async () => {
    const before = peer.requestsTo('/crm/keyed').length;
    expect((await fetch(`${service.url}/keyed`)).status).toBe(200);
    const seen = peer.requestsTo('/crm/keyed').slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers['idempotency-key']).toBe('fixed-123');
    // One field, not the author's value joined with a generated one.
    expect(seen[0]!.headers['idempotency-key']).not.toContain(',');
  });

  it('a PATCH task sends a key', async () => {
    const response = await fetch(`${service.url}/patch`);
    expect(response.status).toBe(200);
    const seen = peer.requestsTo('/crm/patch').at(-1)!;
    expect(seen.method).toBe('PATCH');
    expect(seen.headers['idempotency-key']).toBe(expectedKey(response.headers.get('x-request-id')!, 'patch', 'update'));
  });

  it('a GET task sends none', async () => {
    const before = peer.requestsTo('/crm/lookup').length;
    expect((await fetch(`${service.url}/lookup`)).status).toBe(200);
    const seen = peer.requestsTo('/crm/lookup').slice(before);
    expect(seen.map((r) => r.method)).toEqual(['GET']);
    expect(seen[0]!.headers).not.toHaveProperty('idempotency-key');
  });

  describe('serve --no-idempotency-key', () => {
    let plain: RunningService;
    beforeAll(async () => {
      plain = await startServe(FIXTURE, ['--smtp-url', smtp.url, '--no-idempotency-key'], { PEER: peer.origin });
    });
    afterAll(async () => {
      await plain?.stop();
    });

    it('sends no key on POST or PATCH (and the same fixture under plain serve does)', async () => {
      const before = peer.requests.length;
      expect((await fetch(`${plain.url}/flaky`)).status).toBe(200);
      expect((await fetch(`${plain.url}/patch`)).status).toBe(200);
      expect((await fetch(`${service.url}/flaky`)).status).toBe(200);
      const seen = peer.requests.slice(before);
      expect(seen.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /crm/flaky', 'PATCH /crm/patch', 'POST /crm/flaky']);
      expect(seen[0]!.headers).not.toHaveProperty('idempotency-key');
      expect(seen[1]!.headers).not.toHaveProperty('idempotency-key');
      expect(seen[2]!.headers['idempotency-key']).toMatch(HEX32);
    });

    it("still sends a key the author wrote in the task: the option only stops the service's own", async () => {
      const before = peer.requests.length;
      expect((await fetch(`${plain.url}/keyed`)).status).toBe(200);
      const seen = peer.requests.slice(before);
      expect(seen.map((r) => r.headers['idempotency-key'])).toEqual(['fixed-123']);
    });

    it('sends none on the POST tasks of the contact form either', async () => {
      const before = mark();
      expect((await post(plain, 'contact', VALID)).status).toBe(200);
      await smtp.waitForMessages(before.mails + 1);
      const seen = peer.requests.slice(before.http);
      expect(seen.map((r) => r.path)).toEqual(['/crm/contacts', '/crm/notes']);
      for (const r of seen) expect(r.headers).not.toHaveProperty('idempotency-key');
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Error pages for people

describe('HTML error pages', () => {
  const missingName: Pairs = [
    ['email', 'ann@example.test'],
    ['message', 'Hi'],
  ];

  it('a missing parameter with a browser Accept: an HTML page, status 400, the detail and the request id, the security headers', async () => {
    const before = mark();
    const response = await post(service, 'contact', missingName, { accept: BROWSER_ACCEPT });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expectSecurityHeaders(response.headers);
    const requestId = response.headers.get('x-request-id')!;
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const page = await response.text();
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain('<title>400 Bad Request</title>');
    expect(page).toContain('<p>Missing required parameter &quot;name&quot;.</p>');
    expect(page).toContain(`Request id: ${requestId}`);
    await expectNothingSentSince(before);
  });

  it('several failing parameters: the page lists each, without their values', async () => {
    const before = mark();
    const response = await post(service, 'contact', CONTACT_REFUSALS.at(-1)!.params, { accept: BROWSER_ACCEPT });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await response.text();
    expect(page).toContain('3 parameters are missing or not valid: &quot;name&quot;, &quot;email&quot;, &quot;message&quot;.');
    expect(page).toContain(
      '<ul><li>missing required parameter &quot;name&quot;</li><li>parameter &quot;email&quot; is not one email address</li><li>parameter &quot;message&quot; is longer than 20 characters</li></ul>',
    );
    expect(page).not.toContain(BAD_EMAIL);
    expect(page).not.toContain(LONG_MESSAGE);
    await expectNothingSentSince(before);
  });

  it('a value a task refuses, with a browser Accept: an HTML page naming the parameter', async () => {
    const before = mark();
    const response = await post(
      service,
      'reply',
      [
        ['name', 'Ann'],
        ['reply', 'nobody-here-5c1d'],
      ],
      { accept: BROWSER_ACCEPT },
    );
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await response.text();
    expect(page).toContain('Parameter &quot;reply&quot; is not one email address.');
    expect(page).not.toContain('nobody-here');
    await expectNothingSentSince(before);
  });

  it('reads Accept without regard to case, as media types are', async () => {
    const response = await post(service, 'contact', missingName, { accept: 'TEXT/HTML,*/*;Q=0.8' });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it.each([['*/*'], ['application/json'], ['application/json, text/html;q=0.5'], ['application/problem+json']])('Accept: %s keeps problem+json', async (accept) => {
    const before = mark();
    const response = await post(service, 'contact', missingName, { accept });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    const body = (await response.json()) as Problem;
    expect(body.detail).toBe('missing required parameter "name"');
    expect(body.requestId).toBe(response.headers.get('x-request-id'));
    await expectNothingSentSince(before);
  });

  it('an endpoint with an <error> action uses it, even for a browser: 302 to /sorry', async () => {
    for (const accept of [BROWSER_ACCEPT, '*/*']) {
      const response = await fetch(`${service.url}/with-error-action`, { headers: { accept }, redirect: 'manual' });
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe('/sorry');
      expect(response.headers.get('content-type')).toBeNull();
    }
    // The control: given its parameter, the endpoint succeeds.
    const ok = await fetch(`${service.url}/with-error-action?needed=1`, { headers: { accept: BROWSER_ACCEPT }, redirect: 'manual' });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('fine');
  });

  it('a path with markup in a 404 detail is escaped in the page (and given as is in problem+json)', async () => {
    const path = `/<script>alert("x")</script>&'`;
    const json = await rawGet(service.url, path, { accept: '*/*' });
    expect(json.status).toBe(404);
    // The detail holds the path as sent: this is text the client controls.
    expect((JSON.parse(json.body) as Problem).detail).toBe(`there is no endpoint at ${path}`);

    const page = await rawGet(service.url, path, { accept: BROWSER_ACCEPT });
    expect(page.status).toBe(404);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expectSecurityHeaders(page.headers);
    expect(page.body).toContain('<title>404 Not Found</title>');
    expect(page.body).toContain('<p>There is no endpoint at /&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;.</p>');
    expect(page.body).not.toContain('<script>');
    expect(page.body).toContain(`Request id: ${String(page.headers['x-request-id'])}`);
  });

  it("the service's own 405 is a page too, with its Allow header", async () => {
    const response = await fetch(`${service.url}/contact`, { method: 'PUT', headers: { accept: BROWSER_ACCEPT } });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, POST');
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expectSecurityHeaders(response.headers);
    expect(await response.text()).toContain('<title>405 Method Not Allowed</title>');
  });
});
