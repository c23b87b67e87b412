// Standard Webhooks signing, for a relay that re-signs what it forwards (docs/webhooks.md,
// "Signing what is relayed"): HttpRequest's `<sign scheme="standard" secret="…"/>` will decode the secret
// once at compile time (standardSigningKey) and sign each attempt's request with it, so the
// receiver can check it with any Standard Webhooks library. The caller keeps `id` the same for
// every attempt of a task (the receiver deduplicates on it) and passes each attempt's send time.

import { createSecretKey, type KeyObject } from 'node:crypto';
import { decodeStandardSecret, hmac } from './digest.js';

export type SigningKeyOutcome = { readonly ok: true; readonly key: KeyObject } | { readonly ok: false; readonly message: string };

/** The signing key of a `whsec_` secret; the message never quotes the secret. */
export function standardSigningKey(secret: string): SigningKeyOutcome {
  const bytes = decodeStandardSecret(secret);
  if (bytes === null)
    return { ok: false, message: 'The secret of <sign scheme="standard"> is not "whsec_" followed by base64: use a Standard Webhooks signing secret.' };
  return { ok: true, key: createSecretKey(bytes) };
}

export interface StandardWebhookHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

// What may go in a header value and stay one token for the receiver: visible ASCII without
// spaces or commas (Standard Webhooks' ids are like `msg_2KWPBgLlAfxdpx2AI54pPJ85f4W`).
const ID = /^[!-+\--~]+$/;

/**
 * The three headers for one attempt: `now` is its send time in milliseconds, written in whole
 * unix seconds as the receiver reads it. The signature covers `id.timestamp.body` over the exact
 * body bytes that are sent. An id that could not travel in a header is a programming error.
 */
export function signStandardWebhook(key: KeyObject, id: string, now: number, body: Buffer): StandardWebhookHeaders {
  if (!ID.test(id)) throw new RangeError('a webhook id is visible ASCII without spaces or commas');
  const timestamp = String(Math.floor(now / 1000));
  const signature = hmac('sha256', key, `${id}.${timestamp}.`, body).toString('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
