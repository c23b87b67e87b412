// Every named sender of the catalogue (src/webhooks/senders.ts), verified with a delivery signed
// as the sender signs it (senders-support.ts: the sender's SDK where it signs, else its
// documented recipe), and refused for a tampered byte, another secret or key, and a timestamp
// outside the tolerance; a replay (no clock) is not held to the tolerance. Where the sender's SDK
// only verifies, the same delivery is also checked by it, so the entry and the SDK agree.
import { LinearWebhooks } from '@linear/sdk';
import { Paddle } from '@paddle/paddle-node-sdk';
import { EventWebhook } from '@sendgrid/eventwebhook';
import { Signature as HubSpotSignature } from '@hubspot/api-client';
import Mux from '@mux/mux-node';
import { verifyKey } from 'discord-interactions';
import { WebhooksHelper } from 'square';
import { Webhook as SvixWebhook } from 'svix';
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { SENDERS } from '../../src/webhooks/senders.js';
import { parseDuration } from '../../src/units.js';
import { verifySignature } from '../../src/webhooks/verify-signature.js';
import type { SignatureDescription } from '../../src/webhooks/signature-description.js';
import { SIGNERS, bodyFor, deliveryFor, formParams, keysFor, type Delivery, type SenderKeys } from './senders-support.js';
import { NOW, expectRefused, headers, signature, tampered } from './support.js';

const URL = 'https://hooks.example.com/in/sender?tenant=a%20b';

function described(name: string, keys: SenderKeys, kind: string): SignatureDescription {
  return signature(kind === 'public-key' ? { scheme: name, publicKey: keys.configured } : { scheme: name, secret: keys.configured });
}

/**
 * The request the sender makes; `tamper` changes one byte of what is signed (for Mailgun, whose
 * signature covers its timestamp and token but not the event data, a byte of the token).
 */
async function request(name: string, keys: SenderKeys, at: number, delivery: Delivery, tamper = false) {
  const sent = await SIGNERS[name]!(keys, at, delivery);
  let body = bodyFor(name, keys, at, delivery);
  if (tamper) body = name === 'mailgun' ? Buffer.from(body.toString().replace('"token":"a8', '"token":"a9')) : tampered(body);
  return { headers: headers(sent), body, url: delivery.url, method: delivery.method };
}

describe('the catalogue', () => {
  it('has a signer for every entry, and every entry builds', () => {
    expect(SENDERS.map((e) => e.name).filter((name) => SIGNERS[name] === undefined)).toEqual([]);
    expect(new Set(SENDERS.map((e) => e.name)).size).toBe(SENDERS.length);
  });
});

describe.each(SENDERS.map((entry) => [entry.name, entry] as const))('%s', (name, entry) => {
  const keys = keysFor(name, entry.key);
  const other = keysFor(name, entry.key, 'two');
  const delivery = deliveryFor(name, URL);
  const description = described(name, keys, entry.key);
  const timed = entry.timestampField !== undefined || entry.headers[0].timestamp !== undefined;

  it('accepts what the sender signs', async () => {
    expect(verifySignature(description, await request(name, keys, NOW, delivery), NOW)).toEqual({ ok: true });
  });

  it('refuses a tampered byte and another secret or key', async () => {
    expectRefused(verifySignature(description, await request(name, keys, NOW, delivery, true), NOW), 'no-match', [keys.configured]);
    expectRefused(verifySignature(description, await request(name, other, NOW, delivery), NOW), 'no-match', [keys.configured]);
    expectRefused(verifySignature(description, { headers: headers({}), body: delivery.body, url: URL, method: 'POST' }, NOW), 'missing-header', []);
  });

  it.runIf(timed)('refuses a timestamp outside the tolerance, signed for that time, except on a replay', async () => {
    const tolerance = parseDuration(entry.tolerance ?? '5m')!;
    for (const at of [NOW - tolerance - 2000, NOW + tolerance + 2000]) {
      const sent = await request(name, keys, at, delivery);
      expectRefused(verifySignature(description, sent, NOW), 'timestamp-outside-tolerance', [keys.configured]);
      expect(verifySignature(description, sent, null)).toEqual({ ok: true });
    }
    expect(verifySignature(description, await request(name, keys, NOW - tolerance + 1000, delivery), NOW)).toEqual({ ok: true });
  });
});

describe("the senders' own SDKs accept what the entries accept", () => {
  const now = () => Date.now();

  it('twilio: validateRequest', async () => {
    const keys = keysFor('twilio', 'secret');
    const delivery = deliveryFor('twilio', URL);
    const sent = await SIGNERS.twilio!(keys, now(), delivery);
    expect(twilio.validateRequest(keys.configured, sent['X-Twilio-Signature']!, URL, formParams(delivery.body))).toBe(true);
  });

  it('paddle: webhooks.isSignatureValid', async () => {
    const keys = keysFor('paddle', 'secret');
    const delivery = deliveryFor('paddle', URL);
    const sent = await SIGNERS.paddle!(keys, now(), delivery);
    const paddle = new Paddle('pdl_unused_api_key');
    expect(await paddle.webhooks.isSignatureValid(delivery.body.toString(), keys.configured, sent['Paddle-Signature']!)).toBe(true);
  });

  it('square: WebhooksHelper.verifySignature', async () => {
    const keys = keysFor('square', 'secret');
    const delivery = deliveryFor('square', URL);
    const sent = await SIGNERS.square!(keys, now(), delivery);
    const ok = await WebhooksHelper.verifySignature({
      requestBody: delivery.body.toString(),
      signatureHeader: sent['x-square-hmacsha256-signature']!,
      signatureKey: keys.configured,
      notificationUrl: URL,
    });
    expect(ok).toBe(true);
  });

  it('hubspot: Signature.isValid (v3)', async () => {
    const keys = keysFor('hubspot', 'secret');
    const delivery = deliveryFor('hubspot', URL);
    const at = now();
    const sent = await SIGNERS.hubspot!(keys, at, delivery);
    const options = {
      signatureVersion: 'v3',
      signature: sent['X-HubSpot-Signature-v3']!,
      clientSecret: keys.configured,
      requestBody: delivery.body.toString(),
      url: URL,
      timestamp: at,
    };
    expect(HubSpotSignature.isValid(options)).toBe(true);
  });

  it('linear: LinearWebhooks.verify', async () => {
    const keys = keysFor('linear', 'secret');
    const body = Buffer.from(JSON.stringify({ action: 'create', type: 'Issue', webhookTimestamp: now() }));
    const delivery = { ...deliveryFor('linear', URL), body };
    const sent = await SIGNERS.linear!(keys, now(), delivery);
    expect(new LinearWebhooks(keys.configured).verify(body, sent['Linear-Signature']!)).toBe(true);
    expect(verifySignature(described('linear', keys, 'secret'), { headers: headers(sent), body }, now())).toEqual({ ok: true });
  });

  it('sendgrid: EventWebhook.verifySignature', async () => {
    const keys = keysFor('sendgrid', 'public-key');
    const delivery = deliveryFor('sendgrid', URL);
    const sent = await SIGNERS.sendgrid!(keys, now(), delivery);
    const webhook = new EventWebhook();
    const publicKey = webhook.convertPublicKeyToECDSA(keys.configured);
    const timestamp = sent['X-Twilio-Email-Event-Webhook-Timestamp']!;
    expect(webhook.verifySignature(publicKey, delivery.body.toString(), sent['X-Twilio-Email-Event-Webhook-Signature']!, timestamp)).toBe(true);
  });

  it('discord: verifyKey', async () => {
    const keys = keysFor('discord', 'public-key');
    const delivery = deliveryFor('discord', URL);
    const sent = await SIGNERS.discord!(keys, now(), delivery);
    expect(await verifyKey(delivery.body, sent['X-Signature-Ed25519']!, sent['X-Signature-Timestamp']!, keys.configured)).toBe(true);
  });

  it('svix (and clerk, resend): Webhook.verify', async () => {
    for (const name of ['svix', 'clerk', 'resend']) {
      const keys = keysFor(name, 'whsec');
      const delivery = deliveryFor(name, URL);
      const sent = await SIGNERS[name]!(keys, now(), delivery);
      expect(() => new SvixWebhook(keys.configured).verify(delivery.body.toString(), sent)).not.toThrow();
    }
  });

  it('mux: webhooks.verifySignature', async () => {
    const keys = keysFor('mux', 'secret');
    const delivery = deliveryFor('mux', URL);
    const sent = await SIGNERS.mux!(keys, now(), delivery);
    const mux = new Mux({ tokenId: 'unused', tokenSecret: 'unused', webhookSecret: keys.configured });
    await expect(mux.webhooks.verifySignature(delivery.body.toString(), { 'mux-signature': sent['Mux-Signature']! })).resolves.toBeUndefined();
  });
});

describe("Discord's forged checks", () => {
  it('refuses a signature made with another key, and one that is not a signature at all', async () => {
    const keys = keysFor('discord', 'public-key');
    const description = described('discord', keys, 'public-key');
    const delivery = deliveryFor('discord', URL);
    const sent = await SIGNERS.discord!(keys, NOW, delivery);
    const forged = { ...sent, 'X-Signature-Ed25519': Buffer.alloc(64, 7).toString('hex') };
    expectRefused(verifySignature(description, { headers: headers(forged), body: delivery.body }, NOW), 'no-match', []);
  });
});
