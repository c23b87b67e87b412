// The catalogue of named senders (docs/language.md, "<signature>", "Named senders"): each entry is
// data over the generic schemes, what `<signature scheme="hmac">`, `ed25519` or `ecdsa-p256` would
// say with attributes, and nothing else. describe-signature.ts builds a description from an entry
// exactly as from those attributes, and verify-template.ts verifies both the same way, so a
// sender added here needs no code. The reference table of docs/language.md is generated from
// this list (renderSenderTable in sender-table.ts) and a test fails when the two differ.

import type { DigestEncoding, HmacAlgorithm, TimestampFormat, VerifierKind } from './signature-terms.js';

/** The headers of one delivery: the signature's, and the timestamp's and id's when they have their own; `json:/a/b` is a field of the body. */
export interface HeaderSet {
  readonly signature: string;
  readonly timestamp?: string;
  readonly id?: string;
}

/** How a sender signs: what the attributes of a generic `<signature>` describe. */
export interface SignatureSpec {
  readonly verify: VerifierKind;
  /** The HMAC's digest (sha256 when absent); not for a public key. */
  readonly algorithm?: HmacAlgorithm;
  /** The first set the sender uses; more when it has used other names (Standard Webhooks' `svix-…`). */
  readonly headers: readonly [HeaderSet, ...HeaderSet[]];
  /** Text before each signature (`sha256=`, `v0=`, `v1,`). */
  readonly prefix?: string;
  /** The field of a structured signature header (`v1` of `t=…,v1=…`, `h1` of `ts=…;h1=…`) that holds a signature. */
  readonly field?: string;
  /** What separates the fields of a structured header: `,` (Stripe's, the default) or `;` (Paddle's). */
  readonly separator?: ',' | ';';
  /** The field of the signature header that holds the timestamp (`t`, `ts`). */
  readonly timestampField?: string;
  /** Space-separated signatures, any of which may match. */
  readonly list?: boolean;
  readonly encoding: DigestEncoding;
  readonly timestampFormat?: TimestampFormat;
  /** What is signed: a template over {body}, {timestamp}, {id}, {method}, {url}, {header:Name}, {form-sorted}. */
  readonly signed: string;
  /** The sender's own tolerance for its timestamp, when it documents one (else 5m). */
  readonly tolerance?: string;
}

export interface SenderEntry extends SignatureSpec {
  readonly name: string;
  /** Who sends it, as the documentation names them. */
  readonly sender: string;
  /** What the `secret` or `public-key` attribute holds: a secret as written, a `whsec_` secret (its base64 decoded), or a public key. */
  readonly key: 'secret' | 'whsec' | 'public-key';
  /** The sender's documentation of its signature. */
  readonly reference: string;
}

const STANDARD_HEADERS: SignatureSpec['headers'] = [
  { signature: 'webhook-signature', timestamp: 'webhook-timestamp', id: 'webhook-id' },
  { signature: 'svix-signature', timestamp: 'svix-timestamp', id: 'svix-id' },
];
const SVIX_HEADERS: SignatureSpec['headers'] = [STANDARD_HEADERS[1]!, STANDARD_HEADERS[0]!];

/** Standard Webhooks' symmetric signature, under its own header names or Svix's. */
const STANDARD: Omit<SenderEntry, 'name' | 'sender' | 'reference'> = {
  verify: 'hmac',
  key: 'whsec',
  headers: STANDARD_HEADERS,
  prefix: 'v1,',
  list: true,
  encoding: 'base64',
  signed: '{id}.{timestamp}.{body}',
};

/** A body digest in one header: what most senders do. */
function bodyDigest(header: string, encoding: DigestEncoding, extra: Partial<SignatureSpec> = {}): SignatureSpec {
  return { verify: 'hmac', headers: [{ signature: header }], encoding, signed: '{body}', ...extra };
}

export const SENDERS: readonly SenderEntry[] = [
  {
    name: 'github',
    sender: 'GitHub (also Meta, Gitea)',
    key: 'secret',
    ...bodyDigest('X-Hub-Signature-256', 'hex', { prefix: 'sha256=' }),
    reference: 'https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries',
  },
  {
    name: 'stripe',
    sender: 'Stripe',
    key: 'secret',
    verify: 'hmac',
    headers: [{ signature: 'Stripe-Signature' }],
    field: 'v1',
    timestampField: 't',
    encoding: 'hex',
    signed: '{timestamp}.{body}',
    reference: 'https://docs.stripe.com/webhooks#verify-manually',
  },
  {
    name: 'slack',
    sender: 'Slack',
    key: 'secret',
    verify: 'hmac',
    headers: [{ signature: 'X-Slack-Signature', timestamp: 'X-Slack-Request-Timestamp' }],
    prefix: 'v0=',
    encoding: 'hex',
    signed: 'v0:{timestamp}:{body}',
    reference: 'https://api.slack.com/authentication/verifying-requests-from-slack',
  },
  {
    name: 'shopify',
    sender: 'Shopify',
    key: 'secret',
    ...bodyDigest('X-Shopify-Hmac-Sha256', 'base64'),
    reference: 'https://shopify.dev/docs/apps/build/webhooks/subscribe/https',
  },
  { name: 'standard', sender: 'Standard Webhooks', ...STANDARD, reference: 'https://www.standardwebhooks.com/' },
  {
    name: 'standard-v1a',
    sender: 'Standard Webhooks, asymmetric (`v1a`)',
    verify: 'ed25519',
    key: 'public-key',
    headers: STANDARD_HEADERS,
    prefix: 'v1a,',
    list: true,
    encoding: 'base64',
    signed: '{id}.{timestamp}.{body}',
    reference: 'https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md',
  },
  { name: 'svix', sender: 'Svix', ...STANDARD, headers: SVIX_HEADERS, reference: 'https://docs.svix.com/receiving/verifying-payloads/how-manual' },
  { name: 'clerk', sender: 'Clerk (through Svix)', ...STANDARD, headers: SVIX_HEADERS, reference: 'https://clerk.com/docs/webhooks/sync-data' },
  {
    name: 'resend',
    sender: 'Resend (through Svix)',
    ...STANDARD,
    headers: SVIX_HEADERS,
    reference: 'https://resend.com/docs/dashboard/webhooks/verify-webhooks-requests',
  },
  {
    name: 'twilio',
    sender: 'Twilio (form posts)',
    key: 'secret',
    verify: 'hmac',
    algorithm: 'sha1',
    headers: [{ signature: 'X-Twilio-Signature' }],
    encoding: 'base64',
    signed: '{url}{form-sorted}',
    reference: 'https://www.twilio.com/docs/usage/security#validating-requests',
  },
  {
    name: 'paddle',
    sender: 'Paddle Billing',
    key: 'secret',
    verify: 'hmac',
    headers: [{ signature: 'Paddle-Signature' }],
    field: 'h1',
    separator: ';',
    timestampField: 'ts',
    encoding: 'hex',
    signed: '{timestamp}:{body}',
    tolerance: '5s',
    reference: 'https://developer.paddle.com/webhooks/signature-verification',
  },
  {
    name: 'zoom',
    sender: 'Zoom',
    key: 'secret',
    verify: 'hmac',
    headers: [{ signature: 'x-zm-signature', timestamp: 'x-zm-request-timestamp' }],
    prefix: 'v0=',
    encoding: 'hex',
    signed: 'v0:{timestamp}:{body}',
    reference: 'https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events',
  },
  {
    name: 'hubspot',
    sender: 'HubSpot (signature v3)',
    key: 'secret',
    verify: 'hmac',
    headers: [{ signature: 'X-HubSpot-Signature-v3', timestamp: 'X-HubSpot-Request-Timestamp' }],
    encoding: 'base64',
    timestampFormat: 'milliseconds',
    signed: '{method}{url}{body}{timestamp}',
    reference: 'https://developers.hubspot.com/docs/guides/apps/authentication/validating-requests',
  },
  {
    name: 'square',
    sender: 'Square',
    key: 'secret',
    ...bodyDigest('x-square-hmacsha256-signature', 'base64', { signed: '{url}{body}' }),
    reference: 'https://developer.squareup.com/docs/webhooks/step3validate',
  },
  { name: 'linear', sender: 'Linear', key: 'secret', ...bodyDigest('Linear-Signature', 'hex'), reference: 'https://linear.app/developers/webhooks' },
  {
    name: 'mailgun',
    sender: 'Mailgun',
    key: 'secret',
    verify: 'hmac',
    headers: [{ signature: 'json:/signature/signature', timestamp: 'json:/signature/timestamp' }],
    encoding: 'hex',
    signed: '{timestamp}{json:/signature/token}',
    reference: 'https://documentation.mailgun.com/docs/mailgun/user-manual/events/webhooks#securing-webhooks',
  },
  {
    name: 'intercom',
    sender: 'Intercom',
    key: 'secret',
    ...bodyDigest('X-Hub-Signature', 'hex', { algorithm: 'sha1', prefix: 'sha1=' }),
    reference: 'https://developers.intercom.com/docs/references/webhooks/webhook-models#signed-notifications',
  },
  {
    name: 'twitch',
    sender: 'Twitch EventSub',
    key: 'secret',
    verify: 'hmac',
    headers: [{ signature: 'Twitch-Eventsub-Message-Signature', timestamp: 'Twitch-Eventsub-Message-Timestamp', id: 'Twitch-Eventsub-Message-Id' }],
    prefix: 'sha256=',
    encoding: 'hex',
    timestampFormat: 'rfc3339',
    signed: '{id}{timestamp}{body}',
    tolerance: '10m',
    reference: 'https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#verifying-the-event-message',
  },
  {
    name: 'typeform',
    sender: 'Typeform',
    key: 'secret',
    ...bodyDigest('Typeform-Signature', 'base64', { prefix: 'sha256=' }),
    reference: 'https://www.typeform.com/developers/webhooks/secure-your-webhooks/',
  },
  {
    name: 'calendly',
    sender: 'Calendly',
    key: 'secret',
    verify: 'hmac',
    headers: [{ signature: 'Calendly-Webhook-Signature' }],
    field: 'v1',
    timestampField: 't',
    encoding: 'hex',
    signed: '{timestamp}.{body}',
    tolerance: '3m',
    reference: 'https://developer.calendly.com/api-docs/overview/webhooks/webhook-signatures',
  },
  {
    name: 'discord',
    sender: 'Discord (interactions)',
    key: 'public-key',
    verify: 'ed25519',
    headers: [{ signature: 'X-Signature-Ed25519', timestamp: 'X-Signature-Timestamp' }],
    encoding: 'hex',
    signed: '{timestamp}{body}',
    reference: 'https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers',
  },
  {
    name: 'sendgrid',
    sender: 'SendGrid (Event Webhook)',
    key: 'public-key',
    verify: 'ecdsa-p256',
    headers: [{ signature: 'X-Twilio-Email-Event-Webhook-Signature', timestamp: 'X-Twilio-Email-Event-Webhook-Timestamp' }],
    encoding: 'base64',
    signed: '{timestamp}{body}',
    reference: 'https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features',
  },
  {
    name: 'bitbucket',
    sender: 'Bitbucket Cloud',
    key: 'secret',
    ...bodyDigest('X-Hub-Signature', 'hex', { prefix: 'sha256=' }),
    reference: 'https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/#Secure-webhooks',
  },
  {
    name: 'sentry',
    sender: 'Sentry (integration platform)',
    key: 'secret',
    ...bodyDigest('Sentry-Hook-Signature', 'hex'),
    reference: 'https://docs.sentry.io/organization/integrations/integration-platform/webhooks/#sentry-hook-signature',
  },
  {
    name: 'vercel',
    sender: 'Vercel',
    key: 'secret',
    ...bodyDigest('x-vercel-signature', 'hex', { algorithm: 'sha1' }),
    reference: 'https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks',
  },
  {
    name: 'mux',
    sender: 'Mux',
    key: 'secret',
    verify: 'hmac',
    headers: [{ signature: 'Mux-Signature' }],
    field: 'v1',
    timestampField: 't',
    encoding: 'hex',
    signed: '{timestamp}.{body}',
    reference: 'https://docs.mux.com/core/verify-webhook-signatures',
  },
  {
    name: 'lemonsqueezy',
    sender: 'Lemon Squeezy',
    key: 'secret',
    ...bodyDigest('X-Signature', 'hex'),
    reference: 'https://docs.lemonsqueezy.com/help/webhooks/signing-requests',
  },
  {
    name: 'paystack',
    sender: 'Paystack',
    key: 'secret',
    ...bodyDigest('x-paystack-signature', 'hex', { algorithm: 'sha512' }),
    reference: 'https://paystack.com/docs/payments/webhooks/#verify-event-origin',
  },
  {
    name: 'razorpay',
    sender: 'Razorpay',
    key: 'secret',
    ...bodyDigest('X-Razorpay-Signature', 'hex'),
    reference: 'https://razorpay.com/docs/webhooks/validate-test/',
  },
  {
    name: 'woocommerce',
    sender: 'WooCommerce',
    key: 'secret',
    ...bodyDigest('X-WC-Webhook-Signature', 'base64'),
    reference: 'https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks',
  },
  {
    name: 'docusign',
    sender: 'DocuSign Connect',
    key: 'secret',
    ...bodyDigest('X-DocuSign-Signature-1', 'base64'),
    reference: 'https://developers.docusign.com/platform/webhooks/connect/hmac/',
  },
];

export const SENDER_NAMES: readonly string[] = SENDERS.map((entry) => entry.name);

export function senderEntry(name: string): SenderEntry | undefined {
  return SENDERS.find((entry) => entry.name === name);
}
