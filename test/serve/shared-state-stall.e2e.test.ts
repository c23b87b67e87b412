// A shared-state store (--rate-limit-store) that stalls rather than refuses: a redis-server of the
// test's own, stopped with SIGSTOP (as an fsync or fork stall holds it), so connections stay open
// and commands get no answer. Every command has a bound, so a rate limit fails open and an ALTCHA
// replay check fails closed at once, as with a refused connection, instead of holding the request
// until --request-timeout (30 s here, longer than the test's own timeout: a hang fails the test).
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { spawnRedis, type OwnRedis } from '../helpers/queue.js';
import { fixture, StartedServices, type RunningService } from '../helpers/serve.js';

const SMTP = ['--smtp-url', 'smtp://127.0.0.1:9'];
const services = new StartedServices();
let peer: HttpPeer;
let redis: OwnRedis | null = null;
let stopped = false;

const resume = () => {
  if (stopped && redis !== null) redis.child.kill('SIGCONT');
  stopped = false;
};

beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/crm/limited', { status: 200, body: 'ok' }).route('/crm/altcha', { status: 200, body: 'ok' });
  redis = await spawnRedis();
  if (redis === null) console.warn('skipped: no redis-server on PATH for the stalled-store cases (apt-get install redis-server)');
});
afterAll(async () => {
  resume();
  await services.stopAll();
  await peer?.close();
  await redis?.stop();
});

function post(service: RunningService, endpoint: string, form: Record<string, string> = {}): Promise<{ status: number; body: string; requestId: string }> {
  const url = new URL(`${service.url}/${endpoint}`);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent: false, headers: { 'content-type': 'application/x-www-form-urlencoded', connection: 'close' } },
      (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body, requestId: String(response.headers['x-request-id']) }));
      },
    );
    request.on('error', reject);
    request.end(new URLSearchParams(form).toString());
  });
}

describe('--rate-limit-store on a Redis that stalls (SIGSTOP)', () => {
  it('a rate-limited request is answered as the endpoint answers (fail open), counted and logged; an ALTCHA solution is refused with 503 (fail closed)', async (context) => {
    if (redis === null) return context.skip();
    const args = ['--rate-limit-store', redis.url, '--request-timeout', '30s', ...SMTP];
    const env = { PEER: peer.origin, VERIFIER: 'http://127.0.0.1:9', ALTCHA_KEY: 'altcha-hmac-key', TURNSTILE_SECRET: 's', HCAPTCHA_SECRET: 's', RECAPTCHA_SECRET: 's' };
    const [limited, captcha] = await Promise.all([services.start(fixture('protect'), args, env), services.start(fixture('captcha'), args, env)]);
    // Counted in Redis while it answers.
    expect((await post(limited, 'limited')).status).toBe(200);

    redis.child.kill('SIGSTOP');
    stopped = true;
    try {
      const crm = peer.requestsTo('/crm/limited').length;
      const answer = await post(limited, 'limited');
      expect(answer.status).toBe(200);
      expect(answer.body).toBe('ok 127.0.0.1');
      expect(peer.requestsTo('/crm/limited').length).toBe(crm + 1);
      await limited.waitForLog((l) => l.level === 'warn' && String(l.msg).includes('rate limit store cannot be reached'));
      const metrics = await (await fetch(`${limited.url}/_metrics`)).text();
      expect(metrics).toMatch(/endpoint_service_guard_outcomes_total\{endpoint="limited",check="rate-limit",outcome="store-unavailable"\} 1\b/);

      // Whether a solution was spent cannot be asked: refused, not accepted (a replay might be).
      const challenge = (await (await fetch(`${captcha.url}/_altcha/altcha`)).json()) as { algorithm: string; challenge: string; salt: string; signature: string; maxnumber?: number };
      const { solveChallenge } = await import('altcha-lib');
      const solved = await solveChallenge(challenge.challenge, challenge.salt, challenge.algorithm, challenge.maxnumber).promise;
      const payload = Buffer.from(JSON.stringify({ ...challenge, number: solved!.number })).toString('base64');
      const refused = await post(captcha, 'altcha', { name: 'Ada', altcha: payload });
      expect(refused.status).toBe(503);
      expect(peer.requestsTo('/crm/altcha').length).toBe(0);
    } finally {
      resume();
    }
    // Once Redis answers again, the count goes on there.
    expect((await post(limited, 'limited')).status).toBe(200);
  }, 20_000);
});
