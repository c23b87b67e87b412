// <signature> through the built binary: each scheme accepts what its sender signs (by the
// sender's own library where there is one, by the documented recipe otherwise) and refuses a
// tampered byte, another secret, a stale and a future timestamp, a missing and a malformed
// header, with a 401 problem+json that quotes nothing it was sent, before any parameter is bound
// or task run; the refusal is counted and logged with its reason. Secret rotation, and folders.
import { createHmac, randomBytes } from 'node:crypto';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

const SECRETS = {
  GITHUB_SECRET: 'gh-old-secret-0123456789',
  GITHUB_SECRET_NEW: 'gh-new-secret-9876543210',
  STRIPE_SECRET: 'whsec_stripe_e2e_secret_abcdef',
  SLACK_SECRET: 'slack-signing-secret-e2e-0123',
  SHOPIFY_SECRET: 'shopify-api-secret-e2e-4567',
  STANDARD_SECRET: `whsec_${randomBytes(24).toString('base64')}`,
  HMAC_SECRET: 'hmac-secret-e2e-89ab',
  GITLAB_TOKEN: 'gitlab-token-e2e-cdef',
  ZOOM_SECRET: 'zoom-secret-token-e2e',
  META_SECRET: 'meta-app-secret-e2e',
  META_VERIFY_TOKEN: 'meta-verify-token-e2e',
};
const ALL_SECRETS = Object.values(SECRETS);

let service: RunningService;
let peer: HttpPeer;
beforeAll(async () => {
  peer = await HttpPeer.start();
  for (const name of ['github', 'stripe', 'slack', 'shopify', 'standard', 'hmac', 'gitlab', 'zoom', 'meta', 'graph', 'inherits', 'replaces'])
    peer.route(`/ran/${name}`, { status: 200, body: 'ok' });
  service = await startServe(fixture('signatures'), [], { PEER: peer.origin, ...SECRETS });
});
afterAll(async () => {
  await service?.stop();
  await peer?.close();
});

const now = () => Math.floor(Date.now() / 1000);

function post(endpoint: string, body: string | Buffer, headers: Record<string, string>, type = 'application/json'): Promise<Response> {
  return fetch(`${service.url}/${endpoint}`, {
    method: 'POST',
    headers: { 'content-type': type, ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
}

const ran = (endpoint: string) => peer.requestsTo(`/ran/${endpoint}`).length;

async function expectAccepted(endpoint: string, send: () => Promise<Response>, text: string): Promise<void> {
  const before = ran(endpoint);
  const response = await send();
  expect(response.status).toBe(200);
  expect(await response.text()).toBe(text);
  expect(ran(endpoint)).toBe(before + 1);
}

/**
 * A 401 problem+json whose detail says `what`, quotes none of `sent` (header values) nor any
 * secret, and before which no task ran.
 */
async function expectRefused(endpoint: string, send: () => Promise<Response>, what: RegExp, sent: readonly string[] = []): Promise<string> {
  const before = ran(endpoint);
  const response = await send();
  expect(response.status).toBe(401);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  const problem = (await response.json()) as { status: number; detail: string };
  expect(problem.status).toBe(401);
  expect(problem.detail).toMatch(what);
  for (const value of [...sent, ...ALL_SECRETS].filter((v) => v.length >= 6)) expect(problem.detail).not.toContain(value);
  expect(ran(endpoint)).toBe(before);
  return problem.detail;
}

/** One byte changed, same length. */
function tampered(body: string): string {
  const bytes = Buffer.from(body);
  bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
  return bytes.toString('latin1');
}

const MISSING = /header is missing/;
const MALFORMED = /header is not|holds no/;
const NO_MATCH = /does not match|does not hold the configured token/;
const STALE = /more than 5m old/;
const AHEAD = /ahead of the server's clock/;

describe('github (X-Hub-Signature-256), with two secrets while rotating', () => {
  const body = JSON.stringify({ action: 'opened', issue: { number: 1, title: 'Ünïcode' } });

  it('accepts what @octokit/webhooks-methods signs with either secret', async () => {
    for (const secret of [SECRETS.GITHUB_SECRET, SECRETS.GITHUB_SECRET_NEW]) {
      const header = await octokitSign(secret, body);
      await expectAccepted('github', () => post('github', body, { 'X-Hub-Signature-256': header }), 'ran opened');
    }
  });

  it('refuses a tampered byte, another secret, a missing and a malformed header', async () => {
    const good = await octokitSign(SECRETS.GITHUB_SECRET, body);
    await expectRefused('github', () => post('github', tampered(body), { 'X-Hub-Signature-256': good }), NO_MATCH, [good]);
    const forged = await octokitSign('not-the-secret', body);
    await expectRefused('github', () => post('github', body, { 'X-Hub-Signature-256': forged }), NO_MATCH, [forged]);
    await expectRefused('github', () => post('github', body, {}), MISSING);
    for (const value of [good.slice(7), `sha1=${good.slice(7)}`, `${good}00`])
      await expectRefused('github', () => post('github', body, { 'X-Hub-Signature-256': value }), MALFORMED, [value]);
  });

  it('verifies before the body is parsed into parameters: an unsigned request with a missing value is a 401, not a 400', async () => {
    await expectRefused('github', () => post('github', '{"no":"action"}', {}), MISSING);
  });

  it('refuses malformed JSON only once its signature verifies: signed, a 400; unsigned, a 401', async () => {
    const malformed = '{"action": "opened",';
    const response = await post('github', malformed, { 'X-Hub-Signature-256': await octokitSign(SECRETS.GITHUB_SECRET, malformed) });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { detail: string }).detail).toMatch(/JSON/);
    await expectRefused('github', () => post('github', malformed, {}), MISSING);
  });

  it('verifies a body larger than the 64 KiB kept in memory, read back from its temporary file', async () => {
    const large = JSON.stringify({ action: 'large', padding: 'x'.repeat(200 * 1024) });
    const header = await octokitSign(SECRETS.GITHUB_SECRET, large);
    await expectAccepted('github', () => post('github', large, { 'X-Hub-Signature-256': header }), 'ran large');
    await expectRefused('github', () => post('github', tampered(large), { 'X-Hub-Signature-256': header }), NO_MATCH);
  });

  it('sends no WWW-Authenticate with its 401: senders retry, they answer no challenge', async () => {
    const response = await post('github', body, {});
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBeNull();
  });

  it('verifies a GET too, over its empty body', async () => {
    const response = await fetch(`${service.url}/github?action=x`);
    expect(response.status).toBe(401);
  });
});

describe('stripe (Stripe-Signature), signed by the Stripe SDK', () => {
  const stripe = new Stripe('sk_test_not_used_for_any_request');
  const body = JSON.stringify({ id: 'evt_1', type: 'payment_intent.succeeded', data: { object: { amount: 4200 } } });
  const header = (options: { secret?: string; timestamp?: number; payload?: string } = {}) =>
    stripe.webhooks.generateTestHeaderString({
      payload: options.payload ?? body,
      secret: options.secret ?? SECRETS.STRIPE_SECRET,
      timestamp: options.timestamp ?? now(),
    });

  it('accepts the SDK signature', async () => {
    await expectAccepted('stripe', () => post('stripe', body, { 'Stripe-Signature': header() }), 'ran payment_intent.succeeded');
  });

  it('refuses a tampered byte, another secret, stale and future timestamps, missing and malformed headers', async () => {
    const good = header();
    await expectRefused('stripe', () => post('stripe', tampered(body), { 'Stripe-Signature': good }), NO_MATCH, [good]);
    const forged = header({ secret: 'whsec_wrong' });
    await expectRefused('stripe', () => post('stripe', body, { 'Stripe-Signature': forged }), NO_MATCH, [forged]);
    const stale = header({ timestamp: now() - 600 });
    await expectRefused('stripe', () => post('stripe', body, { 'Stripe-Signature': stale }), STALE, [stale]);
    const future = header({ timestamp: now() + 600 });
    await expectRefused('stripe', () => post('stripe', body, { 'Stripe-Signature': future }), AHEAD, [future]);
    await expectRefused('stripe', () => post('stripe', body, {}), MISSING);
    const v1Only = good.split(',')[1]!;
    await expectRefused('stripe', () => post('stripe', body, { 'Stripe-Signature': v1Only }), MALFORMED, [v1Only]);
  });
});

describe('slack (X-Slack-Signature, X-Slack-Request-Timestamp), by the documented recipe, and its url_verification', () => {
  const sign = (ts: number, body: string, secret = SECRETS.SLACK_SECRET) => ({
    'X-Slack-Signature': 'v0=' + createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex'),
    'X-Slack-Request-Timestamp': String(ts),
  });
  const body = JSON.stringify({ type: 'event_callback', event: { type: 'app_mention', text: 'hi' } });

  it('accepts a signed event, and a slash command posted as a form (signed over the form bytes)', async () => {
    await expectAccepted('slack', () => post('slack', body, sign(now(), body)), 'ran app_mention');
    const form = 'token=x&command=%2Fdeploy&text=now';
    await expectAccepted('slack', () => post('slack', form, sign(now(), form), 'application/x-www-form-urlencoded'), 'ran ');
  });

  it('refuses a tampered byte, another secret, a timestamp outside its 2m tolerance, missing and malformed headers', async () => {
    const ts = now();
    await expectRefused('slack', () => post('slack', tampered(body), sign(ts, body)), NO_MATCH);
    await expectRefused('slack', () => post('slack', body, sign(ts, body, 'wrong')), NO_MATCH);
    await expectRefused('slack', () => post('slack', body, sign(ts - 180, body)), /more than 2m old/);
    await expectRefused('slack', () => post('slack', body, sign(ts + 180, body)), AHEAD);
    await expectRefused('slack', () => post('slack', body, { 'X-Slack-Request-Timestamp': String(ts) }), MISSING);
    await expectRefused('slack', () => post('slack', body, { ...sign(ts, body), 'X-Slack-Request-Timestamp': 'yesterday' }), MALFORMED);
  });

  // Slack's Events API documentation, "url_verification event"; Slack signs it like any event.
  const challenge = '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P';
  const verification = JSON.stringify({ token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl', challenge, type: 'url_verification' });

  it('answers a signed url_verification with its challenge as text, running nothing', async () => {
    const before = ran('slack');
    const response = await post('slack', verification, sign(now(), verification));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await response.text()).toBe(challenge);
    expect(ran('slack')).toBe(before);
  });

  it('verifies the url_verification first: unsigned, it is refused', async () => {
    const detail = await expectRefused('slack', () => post('slack', verification, {}), MISSING);
    expect(detail).not.toContain(challenge);
  });
});

describe('shopify (X-Shopify-Hmac-Sha256, base64), by the documented recipe', () => {
  const body = JSON.stringify({ id: 820982911946154500, email: 'jon@example.com' });
  const sign = (bytes: string, secret = SECRETS.SHOPIFY_SECRET) => createHmac('sha256', secret).update(bytes).digest('base64');

  it('accepts the signature, then binds the topic header', async () => {
    await expectAccepted(
      'shopify',
      () => post('shopify', body, { 'X-Shopify-Hmac-Sha256': sign(body), 'X-Shopify-Topic': 'orders/create' }),
      'ran orders/create',
    );
  });

  it('refuses a tampered byte, another secret, a missing and a malformed header', async () => {
    const good = sign(body);
    await expectRefused('shopify', () => post('shopify', tampered(body), { 'X-Shopify-Hmac-Sha256': good, 'X-Shopify-Topic': 't' }), NO_MATCH, [good]);
    await expectRefused('shopify', () => post('shopify', body, { 'X-Shopify-Hmac-Sha256': sign(body, 'x'), 'X-Shopify-Topic': 't' }), NO_MATCH);
    await expectRefused('shopify', () => post('shopify', body, { 'X-Shopify-Topic': 't' }), MISSING);
    await expectRefused('shopify', () => post('shopify', body, { 'X-Shopify-Hmac-Sha256': 'not base64!', 'X-Shopify-Topic': 't' }), MALFORMED);
  });
});

describe('standard (webhook-* or svix-* headers), signed by the standardwebhooks library', () => {
  const body = JSON.stringify({ type: 'invoice.paid', data: { id: 'in_1' } });
  const signed = (id: string, at: Date, secret = SECRETS.STANDARD_SECRET, payload = body) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, payload),
  });

  it('accepts the library signature, under the webhook- and the svix- names', async () => {
    await expectAccepted('standard', () => post('standard', body, signed('msg_1', new Date())), 'ran invoice.paid');
    const svix = Object.fromEntries(Object.entries(signed('msg_2', new Date())).map(([k, v]) => [k.replace('webhook-', 'svix-'), v]));
    await expectAccepted('standard', () => post('standard', body, svix), 'ran invoice.paid');
  });

  it('refuses a tampered byte, another secret, another id, stale and future timestamps, missing and malformed headers', async () => {
    const good = signed('msg_3', new Date());
    await expectRefused('standard', () => post('standard', tampered(body), good), NO_MATCH, [good['webhook-signature']]);
    const other = `whsec_${randomBytes(24).toString('base64')}`;
    await expectRefused('standard', () => post('standard', body, signed('msg_3', new Date(), other)), NO_MATCH);
    await expectRefused('standard', () => post('standard', body, { ...good, 'webhook-id': 'msg_4' }), NO_MATCH);
    await expectRefused('standard', () => post('standard', body, signed('msg_5', new Date(Date.now() - 600_000))), STALE);
    await expectRefused('standard', () => post('standard', body, signed('msg_6', new Date(Date.now() + 600_000))), AHEAD);
    await expectRefused('standard', () => post('standard', body, { 'webhook-id': 'msg_7' }), MISSING);
    await expectRefused('standard', () => post('standard', body, { ...good, 'webhook-signature': 'v2,abc' }), MALFORMED);
  });
});

describe('hmac (the header, algorithm, encoding and prefix configured)', () => {
  const body = '<event kind="build" status="passed"/>';
  const sign = (bytes: string, secret = SECRETS.HMAC_SECRET) => 'sha512=' + createHmac('sha512', secret).update(bytes).digest('base64');

  it('accepts a body of any content type', async () => {
    await expectAccepted('hmac', () => post('hmac', body, { 'X-Signature': sign(body) }, 'application/xml'), 'ran');
  });

  it('refuses a tampered byte, another secret, a missing header and a digest without its prefix', async () => {
    await expectRefused('hmac', () => post('hmac', tampered(body), { 'X-Signature': sign(body) }, 'application/xml'), NO_MATCH);
    await expectRefused('hmac', () => post('hmac', body, { 'X-Signature': sign(body, 'other') }, 'application/xml'), NO_MATCH);
    await expectRefused('hmac', () => post('hmac', body, {}, 'application/xml'), MISSING);
    await expectRefused('hmac', () => post('hmac', body, { 'X-Signature': sign(body).slice(7) }, 'application/xml'), MALFORMED);
  });
});

describe('token (GitLab: X-Gitlab-Token)', () => {
  const body = JSON.stringify({ object_kind: 'push' });

  it('accepts the configured token and refuses another and none', async () => {
    await expectAccepted('gitlab', () => post('gitlab', body, { 'X-Gitlab-Token': SECRETS.GITLAB_TOKEN }), 'ran push');
    await expectRefused('gitlab', () => post('gitlab', body, { 'X-Gitlab-Token': 'guessed-token-value' }), NO_MATCH, ['guessed-token-value']);
    await expectRefused('gitlab', () => post('gitlab', body, {}), MISSING);
  });
});

describe('folders', () => {
  it("a folder's signature holds below it; an endpoint's own replaces it", async () => {
    const body = '{}';
    await expectRefused('inherits', () => post('inherits', body, {}), /X-Hub-Signature-256 header is missing/);
    const header = await octokitSign(SECRETS.GITHUB_SECRET, body);
    await expectAccepted('inherits', () => post('inherits', body, { 'X-Hub-Signature-256': header }), 'ran');
    await expectRefused(
      'replaces',
      () => post('replaces', body, { 'X-Hub-Signature-256': `sha256=${createHmac('sha256', SECRETS.GITHUB_SECRET).update(body).digest('hex')}` }),
      /X-Token header is missing/,
    );
    await expectAccepted('replaces', () => post('replaces', body, { 'X-Token': SECRETS.GITLAB_TOKEN }), 'ran');
  });
});

describe('forwards', () => {
  it('does not check the signature of the endpoint forwarded to: the request was the forwarding one', async () => {
    await expectAccepted('inherits', () => post('forwards', '{}', {}), 'ran');
  });
});

describe('observability', () => {
  it('counts each refusal by endpoint and reason, and logs it with the request id and nothing sent', async () => {
    const forged = await octokitSign('not-the-secret', '{"action":"x"}');
    const response = await post('github', '{"action":"x"}', { 'X-Hub-Signature-256': forged });
    expect(response.status).toBe(401);
    const requestId = response.headers.get('x-request-id');
    const line = await service.waitForLog((l) => l.msg === 'webhook refused' && l.requestId === requestId);
    expect(line).toMatchObject({ level: 'warn', endpoint: 'github', reason: 'no-match' });
    const text = JSON.stringify(line);
    for (const value of [forged, ...ALL_SECRETS]) expect(text).not.toContain(value);
    const metrics = await (await fetch(`${service.url}/_metrics`)).text();
    for (const [endpoint, reason] of [
      ['github', 'no-match'],
      ['github', 'missing-header'],
      ['github', 'malformed-header'],
      ['stripe', 'timestamp-outside-tolerance'],
    ])
      expect(metrics).toMatch(new RegExp(`endpoint_service_webhook_refusals_total\\{endpoint="${endpoint}",reason="${reason}"\\} [1-9]`));
    expect(service.stderr()).not.toContain(SECRETS.GITHUB_SECRET);
  });
});
