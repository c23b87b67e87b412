// Zoom's signature on its URL validation (x-zm-signature: v0=<hex> over v0:<timestamp>:<body>,
// Zoom's documented recipe), which <handshake scheme="zoom"> checks before answering: accepted
// when made with the secret token, refused when tampered, signed with another key, stale or
// ahead, missing or malformed, with a detail that quotes neither the header nor the secret.
import { createHmac, createSecretKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyZoom } from '../../src/webhooks/verify-zoom.js';
import { NOW, expectRefused, headers, nowSeconds, tampered } from './support.js';

const secret = 'zoom-secret-token-unit';
const key = createSecretKey(Buffer.from(secret));
const body = Buffer.from(JSON.stringify({ payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' }, event_ts: 1654503849680, event: 'endpoint.url_validation' }));
const sign = (ts: number | string, bytes = body, withKey = secret) => 'v0=' + createHmac('sha256', withKey).update(`v0:${ts}:`).update(bytes).digest('hex');
const signed = (ts: number | string, value = sign(ts)) => headers({ 'x-zm-signature': value, 'x-zm-request-timestamp': String(ts) });

describe('zoom: x-zm-signature over v0:<x-zm-request-timestamp>:<body>', () => {
  it('accepts what the recipe signs with the secret token', () => {
    expect(verifyZoom(key, { headers: signed(nowSeconds), body }, NOW)).toEqual({ ok: true });
  });

  it('refuses a tampered byte and another secret', () => {
    const value = sign(nowSeconds);
    expectRefused(verifyZoom(key, { headers: signed(nowSeconds), body: tampered(body) }, NOW), 'no-match', [value, secret]);
    const forged = sign(nowSeconds, body, 'another-secret');
    expectRefused(verifyZoom(key, { headers: signed(nowSeconds, forged), body }, NOW), 'no-match', [forged, secret]);
  });

  it('refuses a timestamp more than 5 minutes old or ahead', () => {
    expectRefused(verifyZoom(key, { headers: signed(nowSeconds - 301), body }, NOW), 'timestamp-outside-tolerance', [secret]);
    expectRefused(verifyZoom(key, { headers: signed(nowSeconds + 301), body }, NOW), 'timestamp-outside-tolerance', [secret]);
  });

  it('refuses missing and malformed headers', () => {
    expectRefused(verifyZoom(key, { headers: headers({}), body }, NOW), 'missing-header', [secret]);
    expectRefused(verifyZoom(key, { headers: headers({ 'x-zm-signature': sign(nowSeconds) }), body }, NOW), 'missing-header', [secret]);
    const value = sign(nowSeconds);
    for (const bad of [
      signed('yesterday', value),
      signed(nowSeconds, value.slice(3)),
      signed(nowSeconds, `v1=${value.slice(3)}`),
      headers({ 'x-zm-signature': [value, value], 'x-zm-request-timestamp': String(nowSeconds) }),
    ]) {
      expectRefused(verifyZoom(key, { headers: bad, body }, NOW), 'malformed-header', [value, secret]);
    }
  });
});
