// Named senders and the template through the built binary: Twilio (its form and the URL it posted
// to, checked by Twilio's SDK), Paddle, Zoom's events, HubSpot v3, Discord (Ed25519), SendGrid
// (ECDSA P-256) and a sender that is not listed, written with the template (a timestamp header
// and a prefix). Each accepts what its sender signs and refuses a tampered byte, another secret
// or key, a stale timestamp and a missing header with a 401 before any task runs; Discord's
// forged checks get a 401. {url} is the URL the sender used: --public-url, a trusted proxy's
// X-Forwarded-Proto and X-Forwarded-Host, or Host.
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';
import { SIGNERS, deliveryFor, formParams, keysFor, type Delivery, type SenderKeys } from '../webhooks/senders-support.js';
import { createHmac } from 'node:crypto';

const NAMES = ['twilio', 'paddle', 'zoom', 'hubspot', 'discord', 'sendgrid', 'acme'] as const;
type Name = (typeof NAMES)[number];
const KIND: Readonly<Record<Name, 'secret' | 'public-key'>> = {
  twilio: 'secret',
  paddle: 'secret',
  zoom: 'secret',
  hubspot: 'secret',
  discord: 'public-key',
  sendgrid: 'public-key',
  acme: 'secret',
};
const KEYS = Object.fromEntries(NAMES.map((name) => [name, keysFor(name, KIND[name])])) as Record<Name, SenderKeys>;
const OTHER = Object.fromEntries(NAMES.map((name) => [name, keysFor(name, KIND[name], 'two')])) as Record<Name, SenderKeys>;
const ENV = {
  TWILIO_AUTH_TOKEN: KEYS.twilio.configured,
  PADDLE_SECRET: KEYS.paddle.configured,
  ZOOM_SECRET: KEYS.zoom.configured,
  HUBSPOT_SECRET: KEYS.hubspot.configured,
  DISCORD_PUBLIC_KEY: KEYS.discord.configured,
  SENDGRID_PUBLIC_KEY: KEYS.sendgrid.configured,
  ACME_SECRET: KEYS.acme.configured,
};

/** The sender's recipe for the listed senders; the one that is not listed signs `v1=` hex of `<ts>.<body>`, the timestamp in its own header. */
async function signed(name: Name, keys: SenderKeys, at: number, delivery: Delivery): Promise<Record<string, string>> {
  if (name !== 'acme') return SIGNERS[name]!(keys, at, delivery);
  const ts = String(Math.floor(at / 1000));
  const digest = createHmac('sha256', keys.signing as string)
    .update(`${ts}.`)
    .update(delivery.body)
    .digest('hex');
  return { 'X-Acme-Signature': `v1=${digest}`, 'X-Acme-Timestamp': ts };
}

let service: RunningService;
let peer: HttpPeer;
beforeAll(async () => {
  peer = await HttpPeer.start();
  for (const name of NAMES) peer.route(`/ran/${name}`, { status: 200, body: 'ok' });
  service = await startServe(fixture('senders'), [], { PEER: peer.origin, ...ENV });
});
afterAll(async () => {
  await service?.stop();
  await peer?.close();
});

const ran = (name: string) => peer.requestsTo(`/ran/${name}`).length;

function post(url: string, delivery: Delivery, headers: Record<string, string>, body = delivery.body): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': delivery.contentType, ...headers }, body: new Uint8Array(body) });
}

async function expectRefused(name: string, response: Promise<Response>, detail: RegExp): Promise<void> {
  const before = ran(name);
  const answer = await response;
  expect(answer.status).toBe(401);
  const problem = (await answer.json()) as { detail: string };
  expect(problem.detail).toMatch(detail);
  for (const secret of Object.values(ENV)) expect(problem.detail).not.toContain(secret);
  expect(ran(name)).toBe(before);
}

/** One byte changed, the same length. */
function tampered(body: Buffer): Buffer {
  const copy = Buffer.from(body);
  copy[Math.floor(copy.length / 2)]! ^= 0x01;
  return copy;
}

describe.each(NAMES)('%s', (name) => {
  const url = () => `${service.url}/${name}`;
  const delivery = () => deliveryFor(name, url());
  const expected = name === 'twilio' ? 'ran Héllo world' : `ran ${name}.test`;

  it('accepts what the sender signs, and runs the task', async () => {
    const before = ran(name);
    const d = delivery();
    const response = await post(url(), d, await signed(name, KEYS[name], Date.now(), d));
    expect(await response.text()).toBe(expected);
    expect(response.status).toBe(200);
    expect(ran(name)).toBe(before + 1);
  });

  it('refuses a tampered byte, another secret or key, and a missing header', async () => {
    const d = delivery();
    await expectRefused(name, post(url(), d, await signed(name, KEYS[name], Date.now(), d), tampered(d.body)), /does not match/);
    await expectRefused(name, post(url(), d, await signed(name, OTHER[name], Date.now(), d)), /does not match/);
    await expectRefused(name, post(url(), d, {}), /header is missing/);
  });

  it.runIf(name !== 'twilio')('refuses a stale timestamp, correctly signed for that time', async () => {
    const d = delivery();
    await expectRefused(name, post(url(), d, await signed(name, KEYS[name], Date.now() - 11 * 60_000, d)), /more than \S+ old/);
  });
});

describe('twilio and the URL it posted to', () => {
  it("signs as Twilio's SDK checks it", async () => {
    const url = `${service.url}/twilio`;
    const d = deliveryFor('twilio', url);
    const headers = await signed('twilio', KEYS.twilio, Date.now(), d);
    expect(twilio.validateRequest(KEYS.twilio.configured, headers['X-Twilio-Signature']!, url, formParams(d.body))).toBe(true);
    expect((await post(url, d, headers)).status).toBe(200);
  });

  it('refuses a signature over another URL: another path, or a query added', async () => {
    const d = deliveryFor('twilio', `${service.url}/twilio`);
    for (const signedUrl of [`${service.url}/twilio2`, `${service.url}/twilio?x=1`]) {
      const headers = await signed('twilio', KEYS.twilio, Date.now(), { ...d, url: signedUrl });
      await expectRefused('twilio', post(`${service.url}/twilio`, d, headers), /does not match/);
    }
  });

  it('reads the URL from --public-url, and from a trusted proxy, but not from an untrusted one', async () => {
    const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'hooks.example.com' };
    const publicUrl = await startServe(fixture('senders'), ['--public-url', 'https://hooks.example.com/in'], { PEER: peer.origin, ...ENV });
    const proxied = await startServe(fixture('senders'), ['--trust-proxy', 'loopback'], { PEER: peer.origin, ...ENV });
    try {
      const d = deliveryFor('twilio', 'https://hooks.example.com/in/twilio');
      expect((await post(`${publicUrl.url}/twilio`, d, await signed('twilio', KEYS.twilio, Date.now(), d))).status).toBe(200);
      const viaProxy = deliveryFor('twilio', 'https://hooks.example.com/twilio');
      const headers = { ...(await signed('twilio', KEYS.twilio, Date.now(), viaProxy)), ...forwarded };
      expect((await post(`${proxied.url}/twilio`, viaProxy, headers)).status).toBe(200);
      await expectRefused('twilio', post(`${service.url}/twilio`, viaProxy, headers), /does not match/);
    } finally {
      await publicUrl.stop();
      await proxied.stop();
    }
  });
});

describe("zoom's events and its URL validation, with one secret token", () => {
  it('answers the validation signed with the secret token, and refuses an unsigned event', async () => {
    const url = `${service.url}/zoom`;
    const body = Buffer.from(JSON.stringify({ payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' }, event_ts: Date.now(), event: 'endpoint.url_validation' }));
    const d: Delivery = { body, url, method: 'POST', contentType: 'application/json' };
    const response = await post(url, d, await signed('zoom', KEYS.zoom, Date.now(), d));
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { plainToken: string; encryptedToken: string };
    expect(answer.encryptedToken).toBe(createHmac('sha256', KEYS.zoom.configured).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex'));
    const event = deliveryFor('zoom', url);
    await expectRefused('zoom', post(url, event, { 'x-zm-request-timestamp': String(Math.floor(Date.now() / 1000)) }), /x-zm-signature header is missing/);
  });
});

describe("discord's forged checks", () => {
  it('gets a 401 for a signature that is not the application key’s', async () => {
    const url = `${service.url}/discord`;
    const d = deliveryFor('discord', url);
    const headers = await signed('discord', KEYS.discord, Date.now(), d);
    const forged = { ...headers, 'X-Signature-Ed25519': Buffer.alloc(64, 0x5a).toString('hex') };
    await expectRefused('discord', post(url, d, forged), /does not match/);
    await expectRefused('discord', post(url, d, { ...headers, 'X-Signature-Ed25519': 'zz' }), /is not an Ed25519 signature in hex/);
  });
});
