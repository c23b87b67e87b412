// Deliveries signed as each named sender signs them (src/webhooks/senders.ts): by the sender's
// own SDK where it has one that signs (Stripe, Svix, Standard Webhooks, HubSpot, Twilio,
// octokit), else by the recipe of the sender's documentation, over node:crypto. Each signer
// takes its key, the signing time and the delivery, and returns the headers the sender sends.
// The unit tests (senders.test.ts) and the binary's (test/serve/senders.e2e.test.ts) share them.
import { createHmac, generateKeyPairSync, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { Signature as HubSpotSignature } from '@hubspot/api-client';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import Stripe from 'stripe';
import twilio from 'twilio';

/** A delivery as the sender makes it: the body, the URL it posts to, and the method. */
export interface Delivery {
  readonly body: Buffer;
  readonly url: string;
  readonly method: string;
  readonly contentType: string;
}

/** The key a sender signs with, and what the receiver is configured with. */
export interface SenderKeys {
  /** What `secret` or `public-key` is set to. */
  readonly configured: string;
  /** What the signer uses: the secret, or the private key. */
  readonly signing: string | KeyObject;
}

export type Signer = (keys: SenderKeys, at: number, delivery: Delivery) => Record<string, string> | Promise<Record<string, string>>;

const hmac = (algorithm: string, key: string, data: string | Buffer, encoding: 'hex' | 'base64') => createHmac(algorithm, key).update(data).digest(encoding);
const seconds = (at: number) => String(Math.floor(at / 1000));
const text = (delivery: Delivery) => delivery.body.toString('utf8');

/** Fields of a form body, as twilio-node's validateRequest takes them: a repeated name as a list. */
export function formParams(body: Buffer): Record<string, string | string[]> {
  const params: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
    const had = params[name];
    params[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return params;
}

/** An Ed25519 or P-256 key pair: the private key signs, the public key as the sender publishes it. */
export function keyPair(kind: 'discord' | 'standard-v1a' | 'sendgrid'): SenderKeys {
  if (kind === 'sendgrid') {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    return { configured: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'), signing: privateKey };
  }
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return { configured: kind === 'discord' ? raw.toString('hex') : `whpk_${raw.toString('base64')}`, signing: privateKey };
}

const secretOf = (keys: SenderKeys) => keys.signing as string;
const privateOf = (keys: SenderKeys) => keys.signing as KeyObject;

/** A body digest in one header, after a prefix: the documented recipe of most senders. */
const bodyDigest =
  (header: string, algorithm: string, encoding: 'hex' | 'base64', prefix = ''): Signer =>
  (keys, _at, delivery) => ({ [header]: prefix + hmac(algorithm, secretOf(keys), delivery.body, encoding) });

const standardFamily = (prefix: 'webhook' | 'svix') => (id: string, at: number, signature: string) => ({
  [`${prefix}-id`]: id,
  [`${prefix}-timestamp`]: seconds(at),
  [`${prefix}-signature`]: signature,
});

/**
 * Mailgun signs in its body: `signature.timestamp` and `signature.token` under the webhook
 * signing key, the signature beside them (its documented recipe); the event data is not signed.
 */
export function mailgunBody(keys: SenderKeys, at: number, token = 'a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0'): Buffer {
  const timestamp = seconds(at);
  const signature = hmac('sha256', secretOf(keys), timestamp + token, 'hex');
  return Buffer.from(JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': { event: 'mailgun.test', id: 'evt_1' } }));
}

/** The body as the sender sends it: Mailgun's carries its signature; every other sender's is the delivery's. */
export function bodyFor(name: string, keys: SenderKeys, at: number, delivery: Delivery): Buffer {
  return name === 'mailgun' ? mailgunBody(keys, at) : delivery.body;
}

export const SIGNERS: Readonly<Record<string, Signer>> = {
  mailgun: () => ({}),
  github: async (keys, _at, delivery) => ({ 'X-Hub-Signature-256': await octokitSign(secretOf(keys), text(delivery)) }),
  stripe: (keys, at, delivery) => ({
    'Stripe-Signature': Stripe.webhooks.generateTestHeaderString({ payload: text(delivery), secret: secretOf(keys), timestamp: Math.floor(at / 1000) }),
  }),
  slack: (keys, at, delivery) => ({
    'X-Slack-Signature': `v0=${hmac('sha256', secretOf(keys), `v0:${seconds(at)}:${text(delivery)}`, 'hex')}`,
    'X-Slack-Request-Timestamp': seconds(at),
  }),
  shopify: bodyDigest('X-Shopify-Hmac-Sha256', 'sha256', 'base64'),
  standard: (keys, at, delivery) =>
    standardFamily('webhook')('msg_standard1', at, new StandardWebhook(secretOf(keys)).sign('msg_standard1', new Date(at), text(delivery))),
  'standard-v1a': (keys, at, delivery) => {
    const signature = cryptoSign(null, Buffer.from(`msg_v1a.${seconds(at)}.${text(delivery)}`), privateOf(keys)).toString('base64');
    return standardFamily('webhook')('msg_v1a', at, `v1a,${signature}`);
  },
  svix: (keys, at, delivery) => standardFamily('svix')('msg_svix1', at, new SvixWebhook(secretOf(keys)).sign('msg_svix1', new Date(at), text(delivery))),
  clerk: (keys, at, delivery) => standardFamily('svix')('msg_clerk1', at, new SvixWebhook(secretOf(keys)).sign('msg_clerk1', new Date(at), text(delivery))),
  resend: (keys, at, delivery) => standardFamily('svix')('msg_resend1', at, new SvixWebhook(secretOf(keys)).sign('msg_resend1', new Date(at), text(delivery))),
  twilio: (keys, _at, delivery) => ({ 'X-Twilio-Signature': twilio.getExpectedTwilioSignature(secretOf(keys), delivery.url, formParams(delivery.body)) }),
  paddle: (keys, at, delivery) => ({ 'Paddle-Signature': `ts=${seconds(at)};h1=${hmac('sha256', secretOf(keys), `${seconds(at)}:${text(delivery)}`, 'hex')}` }),
  zoom: (keys, at, delivery) => ({
    'x-zm-signature': `v0=${hmac('sha256', secretOf(keys), `v0:${seconds(at)}:${text(delivery)}`, 'hex')}`,
    'x-zm-request-timestamp': seconds(at),
  }),
  hubspot: (keys, at, delivery) => ({
    'X-HubSpot-Signature-v3': HubSpotSignature.getSignature(delivery.method, 'v3', {
      signature: '',
      clientSecret: secretOf(keys),
      requestBody: text(delivery),
      url: delivery.url,
      timestamp: at,
    }),
    'X-HubSpot-Request-Timestamp': String(at),
  }),
  square: (keys, _at, delivery) => ({ 'x-square-hmacsha256-signature': hmac('sha256', secretOf(keys), delivery.url + text(delivery), 'base64') }),
  linear: bodyDigest('Linear-Signature', 'sha256', 'hex'),
  intercom: bodyDigest('X-Hub-Signature', 'sha1', 'hex', 'sha1='),
  twitch: (keys, at, delivery) => {
    const id = 'e76c6bd4-55c9-4987-8304-da1588d8988b';
    const timestamp = new Date(at).toISOString().replace('Z', '123456Z');
    return {
      'Twitch-Eventsub-Message-Id': id,
      'Twitch-Eventsub-Message-Timestamp': timestamp,
      'Twitch-Eventsub-Message-Signature': `sha256=${hmac('sha256', secretOf(keys), id + timestamp + text(delivery), 'hex')}`,
    };
  },
  typeform: bodyDigest('Typeform-Signature', 'sha256', 'base64', 'sha256='),
  calendly: (keys, at, delivery) => ({
    'Calendly-Webhook-Signature': `t=${seconds(at)},v1=${hmac('sha256', secretOf(keys), `${seconds(at)}.${text(delivery)}`, 'hex')}`,
  }),
  discord: (keys, at, delivery) => ({
    'X-Signature-Ed25519': cryptoSign(null, Buffer.concat([Buffer.from(seconds(at)), delivery.body]), privateOf(keys)).toString('hex'),
    'X-Signature-Timestamp': seconds(at),
  }),
  sendgrid: (keys, at, delivery) => ({
    'X-Twilio-Email-Event-Webhook-Signature': cryptoSign('sha256', Buffer.concat([Buffer.from(seconds(at)), delivery.body]), privateOf(keys)).toString(
      'base64',
    ),
    'X-Twilio-Email-Event-Webhook-Timestamp': seconds(at),
  }),
  bitbucket: bodyDigest('X-Hub-Signature', 'sha256', 'hex', 'sha256='),
  sentry: bodyDigest('Sentry-Hook-Signature', 'sha256', 'hex'),
  vercel: bodyDigest('x-vercel-signature', 'sha1', 'hex'),
  mux: (keys, at, delivery) => ({ 'Mux-Signature': `t=${seconds(at)},v1=${hmac('sha256', secretOf(keys), `${seconds(at)}.${text(delivery)}`, 'hex')}` }),
  lemonsqueezy: bodyDigest('X-Signature', 'sha256', 'hex'),
  paystack: bodyDigest('x-paystack-signature', 'sha512', 'hex'),
  razorpay: bodyDigest('X-Razorpay-Signature', 'sha256', 'hex'),
  woocommerce: bodyDigest('X-WC-Webhook-Signature', 'sha256', 'base64'),
  docusign: bodyDigest('X-DocuSign-Signature-1', 'sha256', 'base64'),
};

/** Keys for a sender: a fresh key pair for a public-key sender, a `whsec_` secret or plain text otherwise. */
export function keysFor(name: string, kind: 'secret' | 'whsec' | 'public-key', seed = 'one'): SenderKeys {
  if (kind === 'public-key') return keyPair(name as 'discord' | 'standard-v1a' | 'sendgrid');
  const secret = kind === 'whsec' ? `whsec_${Buffer.from(`${name}-${seed}-key-bytes`).toString('base64')}` : `${name}-${seed}-secret`;
  return { configured: secret, signing: secret };
}

/** The form Twilio posts, and a JSON body for everyone else. */
export function deliveryFor(name: string, url: string): Delivery {
  if (name === 'twilio') {
    const body = Buffer.from('To=%2B18005551212&From=%2B14158675309&Body=H%C3%A9llo+world&MessageSid=SM123&NumMedia=0&Digits=1&Digits=2');
    return { body, url, method: 'POST', contentType: 'application/x-www-form-urlencoded' };
  }
  const body = Buffer.from(JSON.stringify({ event: `${name}.test`, data: { id: 'evt_1', text: 'Ünïcode ✓', amount: 1200 } }));
  return { body, url, method: 'POST', contentType: 'application/json' };
}
