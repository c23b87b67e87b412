// <handshake> through the built binary, with each sender's verification request as its
// documentation shows it: answered by the service itself, before any parameter is bound and
// without running a task; a signed one (Slack's in signatures.e2e.test.ts, Zoom's here) is
// verified first. The deliveries that follow go on as usual.
import { createHmac } from 'node:crypto';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

const SECRETS = {
  GITHUB_SECRET: 'gh-secret-handshakes',
  GITHUB_SECRET_NEW: 'gh-secret-handshakes-new',
  STRIPE_SECRET: 'whsec_unused',
  SLACK_SECRET: 'slack-unused',
  SHOPIFY_SECRET: 'shopify-unused',
  STANDARD_SECRET: 'whsec_dW51c2VkLXN0YW5kYXJkLXNlY3JldA==',
  HMAC_SECRET: 'hmac-unused',
  GITLAB_TOKEN: 'gitlab-unused',
  ZOOM_SECRET: 'zoom-secret-token-handshakes',
  META_SECRET: 'meta-app-secret-handshakes',
  META_VERIFY_TOKEN: 'meta-verify-token-handshakes',
};

let service: RunningService;
let peer: HttpPeer;
beforeAll(async () => {
  peer = await HttpPeer.start();
  for (const name of ['zoom', 'meta', 'graph']) peer.route(`/ran/${name}`, { status: 200, body: 'ok' });
  service = await startServe(fixture('signatures'), [], { PEER: peer.origin, ...SECRETS });
});
afterAll(async () => {
  await service?.stop();
  await peer?.close();
});

const ran = (endpoint: string) => peer.requestsTo(`/ran/${endpoint}`).length;

/** `send` runs no task of `endpoint`; its answer is returned. */
async function runsNothing(endpoint: string, send: () => Promise<Response>): Promise<Response> {
  const before = ran(endpoint);
  const response = await send();
  expect(ran(endpoint)).toBe(before);
  return response;
}

describe('zoom: endpoint.url_validation, signed with x-zm-signature', () => {
  // Zoom's documentation, "Validate your webhook endpoint".
  const plainToken = 'qgg8vlvZRS6UYooatFL8Aw';
  const body = JSON.stringify({ payload: { plainToken }, event_ts: 1654503849680, event: 'endpoint.url_validation' });
  const signed = (bytes: string, ts = Math.floor(Date.now() / 1000), secret = SECRETS.ZOOM_SECRET) => ({
    'content-type': 'application/json',
    'x-zm-request-timestamp': String(ts),
    'x-zm-signature': 'v0=' + createHmac('sha256', secret).update(`v0:${ts}:${bytes}`).digest('hex'),
  });
  const post = (bytes: string, headers: Record<string, string>) => fetch(`${service.url}/zoom`, { method: 'POST', headers, body: bytes });

  it('answers plainToken and its HMAC-SHA256 under the secret token, in hex', async () => {
    const response = await runsNothing('zoom', () => post(body, signed(body)));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({ plainToken, encryptedToken: createHmac('sha256', SECRETS.ZOOM_SECRET).update(plainToken).digest('hex') });
    const line = await service.waitForLog((l) => l.msg === 'handshake answered' && l.endpoint === 'zoom');
    expect(line).toMatchObject({ level: 'info', handshake: 'zoom' });
    expect(JSON.stringify(line)).not.toContain(plainToken);
  });

  it('answers nobody but Zoom: unsigned, signed with another secret, tampered or stale, a 401 that echoes nothing', async () => {
    const ts = Math.floor(Date.now() / 1000);
    for (const [bytes, headers] of [
      [body, { 'content-type': 'application/json' }],
      [body, signed(body, ts, 'another-secret')],
      [body.replace('qgg8', 'qgg9'), signed(body, ts)],
      [body, signed(body, ts - 600)],
    ] as const) {
      const response = await runsNothing('zoom', () => post(bytes, headers));
      expect(response.status).toBe(401);
      const text = await response.text();
      expect(text).not.toContain('qgg');
      expect(text).not.toContain(SECRETS.ZOOM_SECRET);
    }
    const metrics = await (await fetch(`${service.url}/_metrics`)).text();
    expect(metrics).toMatch(/endpoint_service_webhook_refusals_total\{endpoint="zoom",reason="no-match"\} [1-9]/);
  });

  it('lets an event through to its parameters and tasks', async () => {
    const event = JSON.stringify({ event: 'meeting.started', payload: { object: { id: '1' } } });
    const before = ran('zoom');
    const response = await post(event, signed(event));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ran meeting.started');
    expect(ran('zoom')).toBe(before + 1);
  });
});

describe('meta: GET hub.mode=subscribe with hub.verify_token and hub.challenge', () => {
  const subscribe = (token: string, challenge = '1158201444') =>
    fetch(`${service.url}/meta?hub.mode=subscribe&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=${challenge}`);

  it('answers the challenge when the verify token matches, though the endpoint checks signatures (Meta does not sign it)', async () => {
    const response = await runsNothing('meta', () => subscribe(SECRETS.META_VERIFY_TOKEN));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await response.text()).toBe('1158201444');
  });

  it('refuses another verify token with a 403 that quotes neither token, counted', async () => {
    const response = await runsNothing('meta', () => subscribe('guessed-verify-token'));
    expect(response.status).toBe(403);
    const text = await response.text();
    expect(text).not.toContain('guessed-verify-token');
    expect(text).not.toContain(SECRETS.META_VERIFY_TOKEN);
    expect(text).not.toContain('1158201444');
    const metrics = await (await fetch(`${service.url}/_metrics`)).text();
    expect(metrics).toMatch(/endpoint_service_webhook_refusals_total\{endpoint="meta",reason="invalid-handshake"\} [1-9]/);
  });

  it('verifies a GET that is no handshake like any request, and runs a signed delivery', async () => {
    expect((await runsNothing('meta', () => fetch(`${service.url}/meta?object=page`))).status).toBe(401);
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
    const before = ran('meta');
    const response = await fetch(`${service.url}/meta`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Hub-Signature-256': await octokitSign(SECRETS.META_SECRET, body) },
      body,
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ran whatsapp_business_account');
    expect(ran('meta')).toBe(before + 1);
  });
});

describe('graph: validationToken in the query', () => {
  // Microsoft Graph's documentation, "Notification endpoint validation": a POST with an empty
  // text/plain body; the token is URL-encoded in the query and answered decoded.
  const token = 'Validation: Testing client application reachability for subscription Request-Id: 25ba2f3e-5c9e-4c4b-9f5b-0b8f2c2a1d0e';

  it('answers the token as text, decoded', async () => {
    const response = await runsNothing('graph', () =>
      fetch(`${service.url}/graph?validationToken=${encodeURIComponent(token)}`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: '',
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await response.text()).toBe(token);
  });

  it('reads the token from the query only, not from a form body', async () => {
    const before = ran('graph');
    const response = await fetch(`${service.url}/graph`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `validationToken=${encodeURIComponent(token)}`,
    });
    expect(response.status).toBe(400);
    expect(ran('graph')).toBe(before);
  });

  it('lets a change notification through to its parameters and tasks', async () => {
    const before = ran('graph');
    const response = await fetch(`${service.url}/graph`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ value: [{ subscriptionId: 's1', clientState: 'secretClientValue', changeType: 'created' }] }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ran secretClientValue');
    expect(ran('graph')).toBe(before + 1);
  });
});
