// CAPTCHA verification through the real binary against a real local verifier: a node:http
// server answering in each provider's siteverify format (Cloudflare Turnstile, hCaptcha,
// reCAPTCHA: a form POST of secret, response and remoteip, answered with JSON `success`, and
// `score` for reCAPTCHA v3), reached through verify-url. Nothing may reach the CRM unless the
// token was verified; each case ends with a verified request to show the CRM was reachable.
import http from 'node:http';
import { createChallenge, solveChallenge } from 'altcha-lib';

type Challenge = Awaited<ReturnType<typeof createChallenge>>;
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, StartedServices, type RunningService } from '../helpers/serve.js';
import { deleteKeys, keysUnder, stopSpawnedRedis, testRedisUrl, uniqueKeyPrefix } from '../helpers/redis.js';

const FIXTURE = fixture('captcha');
/** For the case of instances sharing spent solutions; null (that case skipped, the reason printed) without a Redis. */
const REDIS_URL = await testRedisUrl();
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

interface Verification {
  readonly path: string;
  readonly form: URLSearchParams;
}

/** Answers by token: valid, invalid, low (score 0.1), high (score 0.9), fail500, hang, huge, huge-stream. */
class Verifier {
  readonly received: Verification[] = [];
  private readonly hanging = new Set<http.ServerResponse>();
  private constructor(readonly server: http.Server) {}

  static async start(): Promise<Verifier> {
    let verifier!: Verifier;
    const server = http.createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      request.on('end', () => verifier.answer(request, body, response));
    });
    verifier = new Verifier(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return verifier;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private answer(request: http.IncomingMessage, body: string, response: http.ServerResponse): void {
    const form = new URLSearchParams(body);
    this.received.push({ path: request.url ?? '', form });
    const json = (value: unknown, status = 200) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(value));
    };
    const provider = request.headers['content-type']?.startsWith('application/x-www-form-urlencoded') ? request.url : null;
    if (provider === null) return json({ success: false, 'error-codes': ['bad-request'] });
    switch (form.get('response')) {
      case 'valid':
        return json({ success: true, challenge_ts: new Date().toISOString(), hostname: 'example.test', 'error-codes': [] });
      case 'high':
        return json({ success: true, score: 0.9, action: 'contact', hostname: 'example.test' });
      case 'low':
        return json({ success: true, score: 0.1, action: 'contact', hostname: 'example.test' });
      case 'fail500':
        return json({ error: 'internal' }, 500);
      case 'hang':
        this.hanging.add(response);
        return;
      // A "success" padded to 1 MB: with its length declared, and streamed without one.
      case 'huge':
        return json({ success: true, padding: 'x'.repeat(1024 * 1024) });
      case 'huge-stream': {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"success": true, "padding": "');
        for (let i = 0; i < 64; i++) response.write('x'.repeat(16 * 1024));
        response.end('"}');
        return;
      }
      default:
        return json({ success: false, 'error-codes': ['invalid-input-response'] });
    }
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let peer: HttpPeer;
let verifier: Verifier;
let service: RunningService;
const services = new StartedServices();
const SECRETS = { TURNSTILE_SECRET: 'turnstile-secret-1', HCAPTCHA_SECRET: 'hcaptcha-secret-2', RECAPTCHA_SECRET: 'recaptcha-secret-3', ALTCHA_KEY: 'altcha-hmac-key-4' };

beforeAll(async () => {
  peer = await HttpPeer.start();
  for (const p of ['turnstile', 'hcaptcha', 'recaptcha', 'altcha']) peer.route(`/crm/${p}`, { status: 200, body: 'ok' });
  verifier = await Verifier.start();
  service = await services.start(FIXTURE, ['--trust-proxy', '1'], { PEER: peer.origin, VERIFIER: verifier.origin, ...SECRETS });
});
afterAll(async () => {
  await services.stopAll();
  await peer?.close();
  await verifier?.close();
  await stopSpawnedRedis();
});

function post(endpoint: string, pairs: readonly (readonly [string, string])[], headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${service.url}/${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(pairs.map(([k, v]) => [k, v])).toString() });
}

const CASES = [
  { endpoint: 'turnstile', field: 'cf-turnstile-response', path: '/turnstile/v0/siteverify', secret: SECRETS.TURNSTILE_SECRET, valid: 'valid' },
  { endpoint: 'hcaptcha', field: 'token', path: '/hcaptcha/siteverify', secret: SECRETS.HCAPTCHA_SECRET, valid: 'valid' },
  { endpoint: 'recaptcha', field: 'g-recaptcha-response', path: '/recaptcha/api/siteverify', secret: SECRETS.RECAPTCHA_SECRET, valid: 'high' },
] as const;

describe.each(CASES)('<captcha provider="$endpoint">', ({ endpoint, field, path, secret, valid }) => {
  it('sends the token, the secret and the client address to the verifier once, and runs the tasks only when it is verified', async () => {
    const crm = peer.requestsTo(`/crm/${endpoint}`).length;
    const asked = verifier.received.length;
    const refused = await post(endpoint, [['name', 'Bot'], [field, 'invalid']], { 'x-forwarded-for': '203.0.113.50' });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    const missing = await post(endpoint, [['name', 'Bot']]);
    expect(missing.status).toBe(403);
    const blank = await post(endpoint, [['name', 'Bot'], [field, '  ']]);
    expect(blank.status).toBe(403);
    // A browser gets the page, same status.
    const page = await post(endpoint, [['name', 'Bot'], [field, 'invalid']], { accept: BROWSER_ACCEPT });
    expect(page.status).toBe(403);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');

    const ok = await post(endpoint, [['name', 'Ada'], [field, valid]], { 'x-forwarded-for': '203.0.113.51' });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('thanks Ada');
    // Missing and blank tokens never reach the verifier; the others each once.
    const calls = verifier.received.slice(asked);
    expect(calls.map((c) => [c.path, c.form.get('response'), c.form.get('secret'), c.form.get('remoteip')])).toEqual([
      [path, 'invalid', secret, '203.0.113.50'],
      [path, 'invalid', secret, '127.0.0.1'],
      [path, valid, secret, '203.0.113.51'],
    ]);
    const arrived = peer.requestsTo(`/crm/${endpoint}`).slice(crm);
    expect(arrived.map((r) => new URLSearchParams(r.body).get('name'))).toEqual(['Ada']);
  });

  it('fails closed: a verifier answering 500 is a 503 with Retry-After, and nothing runs', async () => {
    const crm = peer.requestsTo(`/crm/${endpoint}`).length;
    const answer = await post(endpoint, [['name', 'Bot'], [field, 'fail500']]);
    expect(answer.status).toBe(503);
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await post(endpoint, [['name', 'Ada'], [field, valid]])).status).toBe(200);
    expect(peer.requestsTo(`/crm/${endpoint}`).slice(crm).map((r) => new URLSearchParams(r.body).get('name'))).toEqual(['Ada']);
    const metrics = await (await fetch(`${service.url}/_metrics`)).text();
    expect(metrics).toMatch(new RegExp(`endpoint_service_guard_outcomes_total\\{endpoint="${endpoint}",check="captcha",outcome="unavailable"\\} [1-9]`));
  });
});

describe('a verifier that answers more than 64 KiB', () => {
  it.each(['huge', 'huge-stream'])('%s: a "success" of 1 MB is not read to its end: 503 (fails closed), nothing runs', async (token) => {
    const crm = peer.requestsTo('/crm/turnstile').length;
    const answer = await post('turnstile', [['name', 'Bot'], ['cf-turnstile-response', token]]);
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).not.toBeNull();
    const line = await service.waitForLog((l) => l.msg === 'captcha: unavailable' && l.requestId === answer.headers.get('x-request-id'));
    expect(String(line.reason)).toMatch(/more than 64 KiB/);
    expect(peer.requestsTo('/crm/turnstile').length).toBe(crm);
  });
});

describe('reCAPTCHA v3 scores and a verifier that hangs', () => {
  it('refuses a token whose score is below min-score', async () => {
    const crm = peer.requestsTo('/crm/recaptcha').length;
    expect((await post('recaptcha', [['name', 'Bot'], ['g-recaptcha-response', 'low']])).status).toBe(403);
    // A score of 0.9 passes (above); 'valid' carries no score at all and is refused under a min-score.
    expect((await post('recaptcha', [['name', 'NoScore'], ['g-recaptcha-response', 'valid']])).status).toBe(403);
    expect((await post('recaptcha', [['name', 'Ada'], ['g-recaptcha-response', 'high']])).status).toBe(200);
    expect(peer.requestsTo('/crm/recaptcha').slice(crm).map((r) => new URLSearchParams(r.body).get('name'))).toEqual(['Ada']);
  });

  it('a verifier that never answers is a 503 with Retry-After once its timeout is over, and nothing runs', async () => {
    const crm = peer.requestsTo('/crm/turnstile').length;
    const answer = await post('turnstile', [['name', 'Bot'], ['cf-turnstile-response', 'hang']]);
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).not.toBeNull();
    expect(peer.requestsTo('/crm/turnstile').length).toBe(crm);
  }, 20_000);
});

/** What the ALTCHA widget does: the challenge solved by trying numbers, sent base64-encoded. */
async function solve(challenge: Challenge, number?: number): Promise<string> {
  const solution = await solveChallenge(challenge.challenge, challenge.salt, challenge.algorithm, challenge.maxnumber).promise;
  if (solution === null) throw new Error('the challenge could not be solved');
  const payload = { algorithm: challenge.algorithm, challenge: challenge.challenge, number: number ?? solution.number, salt: challenge.salt, signature: challenge.signature };
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}

async function challengeFrom(target: RunningService, endpoint = 'altcha'): Promise<Challenge> {
  const answer = await fetch(`${target.url}/_altcha/${endpoint}`);
  expect(answer.status).toBe(200);
  expect(answer.headers.get('cache-control')).toBe('no-store');
  return (await answer.json()) as Challenge;
}

/** A POST over a connection of its own, so the primary of --workers hands each to the next worker. */
function postOnNewConnection(target: RunningService, endpoint: string, form: Record<string, string>): Promise<{ status: number; requestId: string }> {
  const url = new URL(`${target.url}/${endpoint}`);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent: false, headers: { 'content-type': 'application/x-www-form-urlencoded', connection: 'close' } },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode!, requestId: String(response.headers['x-request-id']) }));
      },
    );
    request.on('error', reject);
    request.end(new URLSearchParams(form).toString());
  });
}

describe('<captcha provider="altcha">', () => {
  it('serves a challenge, accepts its solution once, and refuses a replay, a wrong number or a foreign signature', async () => {
    const crm = peer.requestsTo('/crm/altcha').length;
    const asked = verifier.received.length;
    const challenge = await challengeFrom(service);
    const solution = await solve(challenge);
    const first = await post('altcha', [['name', 'Ada'], ['altcha', solution]]);
    expect(first.status).toBe(200);
    expect((await post('altcha', [['name', 'Replay'], ['altcha', solution]])).status).toBe(403);

    const another = await challengeFrom(service);
    const right = await solveChallenge(another.challenge, another.salt, another.algorithm, another.maxnumber).promise;
    expect((await post('altcha', [['name', 'Wrong'], ['altcha', await solve(another, (right!.number + 1) % (another.maxnumber ?? 100_000))]])).status).toBe(403);
    // Signed with a key the service does not have.
    const foreign = await createChallenge({ hmacKey: 'someone-else', maxNumber: 1000 });
    expect((await post('altcha', [['name', 'Foreign'], ['altcha', await solve(foreign)]])).status).toBe(403);
    expect((await post('altcha', [['name', 'Garbage'], ['altcha', 'not base64 json']])).status).toBe(403);
    expect((await post('altcha', [['name', 'None']])).status).toBe(403);

    expect(peer.requestsTo('/crm/altcha').slice(crm).map((r) => new URLSearchParams(r.body).get('name'))).toEqual(['Ada']);
    // Verified by the service itself: no third party was asked.
    expect(verifier.received.length).toBe(asked);
  });

  it('has no challenge for an endpoint without altcha', async () => {
    expect((await fetch(`${service.url}/_altcha/turnstile`)).status).toBe(404);
    expect((await fetch(`${service.url}/_altcha/nothing-here`)).status).toBe(404);
    expect((await fetch(`${service.url}/_altcha/altcha`, { method: 'POST' })).status).toBe(405);
  });

  it('with --workers 2, a solution spent at one worker is refused by the other', async () => {
    const workers = await services.start(FIXTURE, ['--workers', '2'], { PEER: peer.origin, VERIFIER: verifier.origin, ...SECRETS });
    const crm = peer.requestsTo('/crm/altcha').length;
    const solution = await solve(await challengeFrom(workers));
    const answers: { status: number; requestId: string }[] = [];
    for (let i = 0; i < 4; i++) answers.push(await postOnNewConnection(workers, 'altcha', { name: `try-${i}`, altcha: solution }));
    expect(answers.map((a) => a.status)).toEqual([200, 403, 403, 403]);
    await workers.waitForLog((l) => l.msg === 'request' && l.requestId === answers[3]!.requestId);
    const ids = answers.map((a) => a.requestId);
    const pids = new Set(workers.logs().filter((l) => l.msg === 'request' && ids.includes(String(l.requestId))).map((l) => l.pid));
    // Without this the case could pass with one worker answering every request.
    expect(pids.size).toBe(2);
    expect(peer.requestsTo('/crm/altcha').slice(crm).map((r) => new URLSearchParams(r.body).get('name'))).toEqual(['try-0']);
  });

  (REDIS_URL === null ? it.skip : it)('with --rate-limit-store, a solution spent at one instance is refused by another sharing the Redis', async () => {
    const prefix = uniqueKeyPrefix('altcha');
    const args = ['--rate-limit-store', REDIS_URL!, '--rate-limit-prefix', prefix];
    const environment = { PEER: peer.origin, VERIFIER: verifier.origin, ...SECRETS };
    try {
      const [a, b] = await Promise.all([services.start(FIXTURE, args, environment), services.start(FIXTURE, args, environment)]);
      const solution = await solve(await challengeFrom(a));
      expect((await postOnNewConnection(a, 'altcha', { name: 'first', altcha: solution })).status).toBe(200);
      expect((await postOnNewConnection(b, 'altcha', { name: 'replay', altcha: solution })).status).toBe(403);
      expect((await keysUnder(REDIS_URL!, `${prefix}altcha-spent`)).length).toBe(1);
    } finally {
      await deleteKeys(REDIS_URL!, [prefix]);
    }
  });
});
