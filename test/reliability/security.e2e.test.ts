// Security (issue 7), through the real binary unless said otherwise: open redirects, header
// and SMTP injection, hash authentication, secrets kept out of logs, error bodies and
// dry-run plans, and --allow-task-host against request-built task URLs (SSRF).
import { createHash } from 'node:crypto';
import * as nodeCrypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hashMatches } from '../../src/runtime/hash.js';
import { hostRefusal, parseHostAllowlist } from '../../src/tasks/host-allowlist.js';
import type { Endpoint } from '../../src/compiler/index.js';
import { HttpPeer } from '../helpers/http-peer.js';
import { startServe, type RunningService } from '../helpers/serve.js';
import { SmtpPeer, closedPort } from '../helpers/smtp-peer.js';
import { RELIABILITY_FIXTURES, head, rawRequest } from './raw.js';

// Spies on the comparison the hash check must use, keeping its real behaviour.
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return { ...real, timingSafeEqual: vi.fn(real.timingSafeEqual) };
});

const BIN = fileURLToPath(new URL('../../bin/endpoint-service.js', import.meta.url));
const WEB = `${RELIABILITY_FIXTURES}web/endpoints.xml`;
const TASKS = `${RELIABILITY_FIXTURES}tasks/endpoints.xml`;
const SECRETS_APP = `${RELIABILITY_FIXTURES}secrets/endpoints.xml`;

/** Every secret the secrets fixture reads, and what it would look like encoded. */
const SECRET_ENV = { API_KEY: 'EnvApiKey-9f8e7d', HASH_SECRET: 'EnvHashSecret-4c3b', SMTP_PASSWORD: 'EnvSmtpPassword-2a1b' };
const BASIC_PASSWORD = 'LiteralBasicPw-123';
const SMTP_URL_PASSWORD = 'SmtpUrlPw-55';
const SECRET_TEXTS = [
  ...Object.values(SECRET_ENV),
  BASIC_PASSWORD,
  SMTP_URL_PASSWORD,
  Buffer.from(`svc-user:${BASIC_PASSWORD}`).toString('base64'),
  encodeURIComponent(SECRET_ENV.API_KEY),
];

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
/** The hash a client sends: endpoint name, included values, environment, secret key. */
const hashFor = (endpoint: string, item: string, environment = 'live', key = SECRET_ENV.HASH_SECRET) => sha256(endpoint + item + environment + key);

function expectNoSecrets(text: string, extra: readonly string[] = []): void {
  for (const secret of [...SECRET_TEXTS, ...extra]) expect(text, `found "${secret}"`).not.toContain(secret);
}

describe('open redirects', () => {
  let web: RunningService;
  beforeAll(async () => {
    web = await startServe(WEB, [], { PEER: 'http://127.0.0.1:9' });
  });
  afterAll(async () => {
    await web?.stop();
  });

  const go = (endpoint: string, to: string) => rawRequest(web.url, head(`GET /${endpoint}?to=${encodeURIComponent(to)} HTTP/1.1`));
  const location = (text: string) => /^location: (.*)$/im.exec(text)?.[1];

  it.each([
    'https://good.example.evil.com',
    'https://good.example.evil.com/path',
    'https://good.example@evil.com/',
    'https://good.example:443@evil.com/',
    'https://good.example%2f@evil.com',
    'https://good.example\\@evil.com',
    'https://good.exampl',
    'https://partner.example/application',
    'https://partner.example/ap',
    'http://good.example/',
    'https://evil.com/?https://good.example',
    '//evil.com',
    'javascript:alert(1)//https://good.example',
    'https://good.example\r\nSet-Cookie: a=b',
  ])('refuses %s with a 400 (whitelist https://good.example, https://partner.example/app/)', async (to) => {
    const answer = await go('go', to);
    expect(answer.status).toBe(400);
    expect(location(answer.text)).toBeUndefined();
  });

  it.each(['https://good.example', 'https://good.example/', 'https://good.example/welcome?x=1', 'https://good.example#top', 'https://good.example?x=1', 'https://partner.example/app/x'])(
    'lets %s through with a 302',
    async (to) => {
      const answer = await go('go', to);
      expect(answer.status).toBe(302);
      expect(location(answer.text)).toBe(to);
    },
  );

  it('keeps CR/LF from a whitelisted target out of the Location header', async () => {
    const answer = await go('go', 'https://good.example/\r\nSet-Cookie: a=b');
    expect(answer.status).toBe(302);
    expect(answer.text).not.toMatch(/^set-cookie/im);
    expect(location(answer.text)).toBe('https://good.example/%0D%0ASet-Cookie:%20a=b');
  });

  it.each(['//evil.com', '//evil.com/path', '/\\evil.com', '/\\/evil.com', '/%5Cevil.com'.replace('%5C', '\\')])(
    'refuses %s for a local-only whitelist ("/"): browsers read it as another host',
    async (to) => {
      const answer = await go('go-local', to);
      expect(answer.status).toBe(400);
      expect(location(answer.text)).toBeUndefined();
    },
  );

  it('lets a local path through a local-only whitelist', async () => {
    const answer = await go('go-local', '/thanks?x=1');
    expect(answer.status).toBe(302);
    expect(location(answer.text)).toBe('/thanks?x=1');
  });
});

describe('header, URL, body and SMTP injection', () => {
  let service: RunningService;
  let upstream: HttpPeer;
  let smtp: SmtpPeer;
  beforeAll(async () => {
    upstream = await HttpPeer.start();
    upstream.route('/record', { status: 200 }).route('/items/..%2Fadmin%3Fdelete%3D1%23x', { status: 200 });
    smtp = await SmtpPeer.start();
    service = await startServe(`${RELIABILITY_FIXTURES}injection/endpoints.xml`, ['--smtp-url', smtp.url], { PEER: upstream.origin });
  });
  afterAll(async () => {
    await service?.stop();
    await upstream?.close();
    await smtp?.close();
  });

  // Refused before the first side effect (the task is prepared first), naming the parameter.
  it.each(['a\r\nX-Injected: 1', 'a\nX-Injected: 1', 'a\rX-Injected: 1'])('a CR/LF in a header value (%j) refuses the request; nothing is sent', async (value) => {
    const before = upstream.requests.length;
    const response = await fetch(`${service.url}/header?value=${encodeURIComponent(value)}`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { detail: string; errors: unknown };
    expect(body.errors).toEqual([{ parameter: 'value', detail: 'parameter "value" contains a line break' }]);
    expect(JSON.stringify(body)).not.toContain('X-Injected');
    expect(upstream.requests.length).toBe(before);
  });

  it('a header value without CR/LF is sent as is (so the refusals above are not a broken fixture)', async () => {
    const response = await fetch(`${service.url}/header?value=${encodeURIComponent('plain value')}`);
    expect(response.status).toBe(200);
    expect(upstream.requests.at(-1)!.headers['x-customer']).toBe('plain value');
  });

  it('a value in a URL path cannot climb out of its segment or add a query', async () => {
    const response = await fetch(`${service.url}/path?id=${encodeURIComponent('../admin?delete=1#x')}`);
    expect(response.status).toBe(200);
    const seen = upstream.requests.at(-1)!;
    expect(seen.url).toBe('/items/..%2Fadmin%3Fdelete%3D1%23x');
    expect(seen.query.has('delete')).toBe(false);
  });

  it('a value in a JSON body cannot add keys', async () => {
    const hostile = 'x", "admin": true, "y": "';
    const response = await fetch(`${service.url}/json?item=${encodeURIComponent(hostile)}`);
    expect(response.status).toBe(200);
    expect(JSON.parse(upstream.requests.at(-1)!.body)).toEqual({ item: hostile, admin: false });
  });

  it.each([
    ['subject', 'subject', { to: 'ok@example.test', subject: 'Hi\r\nBcc: victim@example.test', reply: 'r@example.test' }],
    ['subject (LF only)', 'subject', { to: 'ok@example.test', subject: 'Hi\nBcc: victim@example.test', reply: 'r@example.test' }],
    ['to', 'to', { to: 'ok@example.test\r\nBcc: victim@example.test', subject: 'Hi', reply: 'r@example.test' }],
    ['reply-to', 'reply', { to: 'ok@example.test', subject: 'Hi', reply: 'r@example.test\r\nBcc: victim@example.test' }],
    ['to holding two addresses', 'to', { to: 'ok@example.test, victim@example.test', subject: 'Hi', reply: 'r@example.test' }],
    ['to holding a group', 'to', { to: 'list: a@example.test, victim@example.test;', subject: 'Hi', reply: 'r@example.test' }],
  ])('a hostile %s refuses the request, naming the parameter; nothing is sent', async (_name, parameter, form) => {
    const before = smtp.messages.length;
    const tried = smtp.recipientsTried.length;
    const response = await fetch(`${service.url}/mail`, { method: 'POST', body: new URLSearchParams(form) });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { parameter: string; detail: string }[] };
    expect(body.errors.map((e) => e.parameter)).toEqual([parameter]);
    expect(body.errors[0]!.detail).toMatch(/line break|address/);
    expect(JSON.stringify(body)).not.toContain('victim');
    expect(smtp.messages.length).toBe(before);
    expect(smtp.recipientsTried.length).toBe(tried);
  });

  it('an uploaded file name with CR/LF and ../ cannot add headers or recipients to the mail', async () => {
    const boundary = 'injection-boundary';
    // RFC 2231 lets a client put any byte in a file name, CR and LF included.
    const name = encodeURIComponent('../../etc/x.txt\r\nBcc: victim@example.test\r\nX-Injected: yes');
    const body =
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename*=utf-8''${name}\r\nContent-Type: text/plain\r\n\r\ncontent\r\n` + `--${boundary}--\r\n`;
    const before = smtp.messages.length;
    const tried = smtp.recipientsTried.length;
    const response = await fetch(`${service.url}/upload-mail`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
    // Refusing the name (502) or sending it encoded (200) are both safe; injecting is not.
    expect([200, 502]).toContain(response.status);
    expect(smtp.recipientsTried.slice(tried)).toEqual(response.status === 200 ? ['office@example.test'] : []);
    if (response.status === 200) {
      const mail = smtp.messages.slice(before)[0]!;
      expect(mail.parsed.headers.has('x-injected')).toBe(false);
      expect(mail.parsed.bcc).toBeUndefined();
      expect(mail.raw).not.toMatch(/^X-Injected:/im);
      expect(mail.raw).not.toMatch(/^Bcc:/im);
      expect(mail.parsed.attachments).toHaveLength(1);
      expect(mail.parsed.attachments[0]!.content.toString()).toBe('content');
    }
  });

  it('a plain message is delivered (so the refusals above are not a broken fixture)', async () => {
    const before = smtp.messages.length;
    const response = await fetch(`${service.url}/mail`, { method: 'POST', body: new URLSearchParams({ to: 'ok@example.test', subject: 'Hi there', reply: 'r@example.test' }) });
    expect(response.status).toBe(200);
    expect(smtp.messages.length).toBe(before + 1);
    expect(smtp.messages.at(-1)!.envelope.to).toEqual(['ok@example.test']);
    expect(smtp.messages.at(-1)!.parsed.subject).toBe('Hi there');
  });
});

describe('hash authentication', () => {
  it('compares with crypto.timingSafeEqual, on lowercase hex, for every key', () => {
    const timingSafeEqual = vi.mocked(nodeCrypto.timingSafeEqual);
    timingSafeEqual.mockClear();
    const endpoint = { name: 'call' } as Endpoint;
    const keys = [Buffer.from('first'), Buffer.from('second')];
    const good = sha256('call' + 'x' + 'live' + 'second');
    expect(hashMatches(endpoint, ['x'], 'live', keys, good.toUpperCase())).toBe(true);
    // Every key is compared, even after the match: the time does not tell which key matched.
    expect(timingSafeEqual).toHaveBeenCalledTimes(2);
    expect(timingSafeEqual.mock.calls.some(([a, b]) => Buffer.from(a as Buffer).toString() === good && Buffer.from(b as Buffer).toString() === good)).toBe(true);
    timingSafeEqual.mockClear();
    expect(hashMatches(endpoint, ['x'], 'live', keys, sha256('other'))).toBe(false);
    expect(timingSafeEqual).toHaveBeenCalledTimes(2);
    // A malformed hash never reaches the comparison (timingSafeEqual throws on unequal lengths).
    timingSafeEqual.mockClear();
    expect(hashMatches(endpoint, ['x'], 'live', keys, good.slice(1))).toBe(false);
    expect(hashMatches(endpoint, ['x'], 'live', keys, `${good}00`)).toBe(false);
    expect(timingSafeEqual).not.toHaveBeenCalled();
  });

  describe('through serve', () => {
    let service: RunningService;
    let upstream: HttpPeer;
    beforeAll(async () => {
      upstream = await HttpPeer.start();
      upstream.route('/api', { status: 200 });
      service = await startServe(SECRETS_APP, ['--smtp-url', `smtp://mailer:${SMTP_URL_PASSWORD}@127.0.0.1:${await closedPort()}`], { PEER: upstream.origin, ...SECRET_ENV });
    });
    afterAll(async () => {
      await service?.stop();
      await upstream?.close();
    });

    const call = (query: string) => fetch(`${service.url}/call?${query}`);

    it.each([
      ['no hash', 'item=book'],
      ['an empty hash', 'item=book&hash='],
      ['a wrong hash', `item=book&hash=${sha256('wrong')}`],
      ['the hash of another value', `item=pen&hash=${hashFor('call', 'book')}`],
      ['the hash of another endpoint', `item=book&hash=${hashFor('mail', 'book')}`],
      ['the hash of another environment', `item=book&environment=preview&hash=${hashFor('call', 'book', 'live')}`],
      ['the hash of another key', `item=book&hash=${hashFor('call', 'book', 'live', 'guess')}`],
      ['a hash sent twice', `item=book&hash=${hashFor('call', 'book')}&hash=${hashFor('call', 'book')}`],
      ['a truncated hash', `item=book&hash=${hashFor('call', 'book').slice(0, 63)}`],
      ['a hash with non-hex characters', `item=book&hash=${hashFor('call', 'book').slice(0, 63)}g`],
      ['a hash in the wrong parameter', `item=book&Hash=${hashFor('call', 'book')}`],
    ])('%s: 401, and no task runs', async (_name, query) => {
      const before = upstream.requests.length;
      const response = await call(query);
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(upstream.requests.length).toBe(before);
    });

    it.each([
      ['lowercase', hashFor('call', 'book')],
      ['uppercase', hashFor('call', 'book').toUpperCase()],
    ])('accepts a %s hex hash', async (_name, hash) => {
      const before = upstream.requests.length;
      const response = await call(`item=book&hash=${hash}`);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe('called book');
      expect(upstream.requests.length).toBe(before + 1);
    });
  });
});

describe('secrets stay out of logs, error bodies and dry-run plans', () => {
  let service: RunningService;
  let upstream: HttpPeer;
  const sentHashes: string[] = [];
  const bodies: string[] = [];
  beforeAll(async () => {
    upstream = await HttpPeer.start();
    service = await startServe(SECRETS_APP, ['--smtp-url', `smtp://mailer:${SMTP_URL_PASSWORD}@127.0.0.1:${await closedPort()}`], { PEER: upstream.origin, ...SECRET_ENV });
  });
  afterAll(async () => {
    await service?.stop();
    await upstream?.close();
  });

  async function request(endpoint: string, item: string): Promise<Response> {
    const hash = hashFor(endpoint, item);
    sentHashes.push(hash);
    const response = await fetch(`${service.url}/${endpoint}?item=${item}&hash=${hash}`);
    bodies.push(await response.clone().text());
    return response;
  }

  it('uses the secrets (so their absence below means something)', async () => {
    upstream.route('/api', { status: 200 });
    const response = await request('call', 'used');
    expect(response.status).toBe(200);
    const seen = upstream.requests.at(-1)!;
    expect(seen.headers['x-api-key']).toBe(SECRET_ENV.API_KEY);
    expect(seen.query.get('key')).toBe(SECRET_ENV.API_KEY);
    expect(seen.headers.authorization).toBe(`Basic ${Buffer.from(`svc-user:${BASIC_PASSWORD}`).toString('base64')}`);
  });

  it('a failing HTTP task: the problem body and the log hold no secret', async () => {
    upstream.route('/api', { status: 500, body: 'upstream broke' });
    const response = await request('call', 'failing');
    expect(response.status).toBe(502);
    const requestId = response.headers.get('x-request-id');
    const line = await service.waitForLog((l) => l.msg === 'task' && l.requestId === requestId);
    expect(String(line.error)).toContain('answered 500');
  });

  it('${internal-error-text} in an <error> action names the failure, not the secrets', async () => {
    upstream.route('/api', { status: 503, body: 'down' });
    const response = await request('call-custom-error', 'custom');
    expect(response.status).toBe(502);
    const text = await response.text();
    expect(text).toContain('answered 503');
    expectNoSecrets(text);
  });

  it('an HTTP task that cannot connect, and one that times out', async () => {
    upstream.route('/api', { never: true });
    expect((await request('call', 'hanging')).status).toBe(502);
    upstream.route('/api', { reset: true });
    expect((await request('call', 'reset')).status).toBe(502);
  });

  it('a failing Email task (SMTP URL with a password, server unreachable)', async () => {
    const response = await request('mail', 'mailed');
    expect(response.status).toBe(502);
    const requestId = response.headers.get('x-request-id');
    await service.waitForLog((l) => l.msg === 'task' && l.requestId === requestId && l.outcome === 'failed');
  });

  it('a 401 for a bad hash, and a 400 for a bad environment', async () => {
    const bad = await fetch(`${service.url}/call?item=x&hash=${sha256(SECRET_ENV.HASH_SECRET)}`);
    sentHashes.push(sha256(SECRET_ENV.HASH_SECRET));
    expect(bad.status).toBe(401);
    bodies.push(await bad.text());
    const env = await fetch(`${service.url}/call?item=x&environment=${SECRET_ENV.API_KEY}&hash=${hashFor('call', 'x')}`);
    expect(env.status).toBe(400);
    bodies.push(await env.text());
  });

  it('nothing above wrote a secret or a sent hash to stderr or into a body', async () => {
    // Let the last log lines arrive: a request line follows each answer.
    await service.waitForLog((l) => l.msg === 'request' && l.status === 400);
    const stderr = service.stderr();
    expect(stderr).toContain('"msg":"task"');
    expectNoSecrets(stderr, sentHashes);
    for (const body of bodies) expectNoSecrets(body, sentHashes);
  });

  it('dry-run prints no secret and no hash, in any format', async () => {
    const hash = hashFor('call', 'planned');
    for (const format of ['text', 'json']) {
      const r = await execa('node', [BIN, 'dry-run', SECRETS_APP, '--param', 'item=planned', '--param', `hash=${hash}`, '--format', format], {
        reject: false,
        env: { PATH: process.env.PATH ?? '', PEER: 'http://127.0.0.1:9', ...SECRET_ENV },
        extendEnv: false,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      // The plan shows the masked values, so the secrets were there to be masked.
      expect(r.stdout).toContain('***');
      expect(r.stdout).toContain('planned');
      expectNoSecrets(`${r.stdout}\n${r.stderr}`, [hash]);
    }
  });
});

describe('--allow-task-host (SSRF)', () => {
  let upstream: HttpPeer;
  let other: HttpPeer;
  /** The fixture has Email tasks, so serve needs an SMTP URL; nothing is mailed here. */
  let smtpUrl: string;
  beforeAll(async () => {
    smtpUrl = `smtp://127.0.0.1:${await closedPort()}`;
    upstream = await HttpPeer.start();
    upstream.route('/hook', { status: 200 }).route('/bounce', (r) => ({ status: 302, headers: { location: String(r.query.get('to')) } }));
    other = await HttpPeer.start();
    other.route('/hook', { status: 200 });
  });
  afterAll(async () => {
    await upstream?.close();
    await other?.close();
  });

  const callback = (service: RunningService, url: string) => fetch(`${service.url}/callback?url=${encodeURIComponent(url)}`);

  it('compares hosts after URL normalisation: case, trailing dot, numeric IPv4, IPv6, *.subdomains', () => {
    const parsed = parseHostAllowlist(['API.example.test., 127.0.0.1', '[::1],*.hooks.example.test']);
    if (!parsed.ok) throw new Error(parsed.error);
    const allowed = (url: string) => hostRefusal(parsed.list, new URL(url)) === null;
    expect(allowed('https://api.example.test/x')).toBe(true);
    expect(allowed('https://API.EXAMPLE.TEST./x')).toBe(true);
    expect(allowed('http://2130706433/')).toBe(true); // 127.0.0.1 written as one number
    expect(allowed('http://0x7f.0.0.1/')).toBe(true);
    expect(allowed('http://[::1]:8080/')).toBe(true);
    expect(allowed('https://a.hooks.example.test/')).toBe(true);
    expect(allowed('https://a.b.hooks.example.test/')).toBe(true);
    expect(allowed('https://hooks.example.test/')).toBe(false);
    expect(allowed('https://evilhooks.example.test/')).toBe(false);
    expect(allowed('https://api.example.test.evil.com/')).toBe(false);
    expect(allowed('https://api.example.test@evil.com/')).toBe(false);
    expect(allowed('http://127.0.0.2/')).toBe(false);
    expect(allowed('http://localhost/')).toBe(false);
    expect(allowed('http://169.254.169.254/latest/meta-data/')).toBe(false);
    expect(hostRefusal(parsed.list, new URL('http://localhost/'))).toContain('"localhost"');
  });

  it('is documented in serve --help', async () => {
    const r = await execa('node', [BIN, 'serve', '--help'], { reject: false });
    expect(r.stdout).toMatch(/--allow-task-host <host(s)?>/);
  });

  it('refuses a task URL to any other host before connecting: 502 and a clear log line', async () => {
    // 127.0.0.1 is allowed, localhost (the same machine by another name) is not.
    const service = await startServe(TASKS, ['--smtp-url', smtpUrl, '--allow-task-host', 'api.example.test,127.0.0.1', '--allow-task-host', 'hooks.example.test'], { PEER: upstream.origin });
    try {
      const allowed = await callback(service, upstream.url('/hook'));
      expect(allowed.status).toBe(200);
      expect(upstream.requestsTo('/hook').length).toBe(1);

      const before = other.requests.length;
      const refused = await callback(service, `http://localhost:${other.port}/hook`);
      expect(refused.status).toBe(502);
      const problem = (await refused.json()) as { detail: string };
      expect(problem.detail).not.toContain('localhost');
      const requestId = refused.headers.get('x-request-id');
      const line = await service.waitForLog((l) => l.msg === 'task' && l.requestId === requestId);
      expect(line.outcome).toBe('failed');
      expect(String(line.error)).toMatch(/localhost.*not .*allow|allow-task-host/i);
      expect(other.requests.length).toBe(before);

      // A redirect from an allowed host to another one is refused too.
      const bounced = await callback(service, upstream.url(`/bounce?to=${encodeURIComponent(`http://localhost:${other.port}/hook`)}`));
      expect(bounced.status).toBe(502);
      expect(other.requests.length).toBe(before);
    } finally {
      expect((await service.stop()).code).toBe(0);
    }
  });

  it('without the option, any host may be called (the default stays open)', async () => {
    const service = await startServe(TASKS, ['--smtp-url', smtpUrl], { PEER: upstream.origin });
    try {
      const before = other.requests.length;
      const response = await callback(service, `http://localhost:${other.port}/hook`);
      expect(response.status).toBe(200);
      expect(other.requests.length).toBe(before + 1);
    } finally {
      await service.stop();
    }
  });

  it.each([['https://api.example.test'], ['api.example.test/path'], ['']])('refuses a malformed value %j with a usage error', async (value) => {
    const r = await execa('node', [BIN, 'serve', TASKS, '--port', '0', '--workers', '1', '--smtp-url', smtpUrl, '--allow-task-host', value], { reject: false, timeout: 20_000 });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('--allow-task-host');
    // Refused for its value, not as an option serve does not know.
    expect(r.stderr).not.toMatch(/unknown option/);
  });
});
