// Signatures over a timestamp and the body (stripe, slack, standard under both header families):
// each accepts its sender's signature (Stripe's SDK, Slack's documented example, the
// standardwebhooks library and the specification's example), refuses a tampered byte, another
// secret, a missing and a malformed header, and a timestamp too old or too far ahead.
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { verifySignature, verifySignatures } from '../../src/webhooks/verify-signature.js';
import { NOW, expectRefused, headers, nowSeconds, signature, tampered } from './support.js';

const body = Buffer.from(JSON.stringify({ id: 'evt_1', type: 'payment_intent.succeeded', data: { amount: 4200, note: 'café' } }));
const stripeSdk = new Stripe('sk_test_not_used_for_any_request');

describe('stripe: Stripe-Signature: t=<unix>,v1=<hex>', () => {
  const secret = 'whsec_stripe_test_secret_1234567890';
  const stripe = signature({ scheme: 'stripe', secret });
  const header = (options: { secret?: string; timestamp?: number; payload?: Buffer } = {}) =>
    stripeSdk.webhooks.generateTestHeaderString({
      payload: (options.payload ?? body).toString('utf8'),
      secret: options.secret ?? secret,
      timestamp: options.timestamp ?? nowSeconds,
    });

  it("accepts what Stripe's SDK signs", () => {
    expect(verifySignature(stripe, { headers: headers({ 'Stripe-Signature': header() }), body }, NOW)).toEqual({ ok: true });
  });

  it('accepts when any v1 matches (Stripe signs with the old and the new secret while it rolls)', () => {
    const other = header({ secret: 'whsec_previous' }).split(',')[1]!;
    const value = `${header()},${other}`.replace(
      /^(t=\d+),(v1=[0-9a-f]+),(v1=[0-9a-f]+)$/,
      '$1,$3,$2,v0=6ffbb59b2300aae63f272406069a9788598b792a944a07aba816edb039989a39',
    );
    expect(value.split(',').filter((p) => p.startsWith('v1=')).length).toBe(2);
    expect(value.split(',')[1]).toBe(other);
    expect(verifySignature(stripe, { headers: headers({ 'Stripe-Signature': value }), body }, NOW)).toEqual({ ok: true });
  });

  it('refuses a tampered byte, another secret, a missing header and malformed ones', () => {
    const good = header();
    expectRefused(verifySignature(stripe, { headers: headers({ 'Stripe-Signature': good }), body: tampered(body) }, NOW), 'no-match', [good, secret]);
    const forged = header({ secret: 'whsec_wrong' });
    expectRefused(verifySignature(stripe, { headers: headers({ 'Stripe-Signature': forged }), body }, NOW), 'no-match', [forged, secret]);
    expectRefused(verifySignature(stripe, { headers: headers({}), body }, NOW), 'missing-header', [secret]);
    const v1 = good.split(',')[1]!;
    for (const value of [
      v1,
      `t=${nowSeconds}`,
      `t=${nowSeconds},v1=nothex`,
      `t=abc,${v1}`,
      `t=-${nowSeconds},${v1}`,
      `t=${nowSeconds},t=${nowSeconds},${v1}`,
      `${v1};t=${nowSeconds}`,
    ]) {
      expectRefused(verifySignature(stripe, { headers: headers({ 'Stripe-Signature': value }), body }, NOW), 'malformed-header', [value, v1, secret]);
    }
  });

  it('refuses a stale and a future timestamp, with the SDK signing for that time, and accepts the edges of the tolerance', () => {
    const stale = header({ timestamp: nowSeconds - 301 });
    expectRefused(verifySignature(stripe, { headers: headers({ 'Stripe-Signature': stale }), body }, NOW), 'timestamp-outside-tolerance', [
      stale,
      String(nowSeconds - 301),
      secret,
    ]);
    const future = header({ timestamp: nowSeconds + 301 });
    const result = verifySignature(stripe, { headers: headers({ 'Stripe-Signature': future }), body }, NOW);
    expectRefused(result, 'timestamp-outside-tolerance', [future, String(nowSeconds + 301), secret]);
    expect(!result.ok && result.detail).toContain('ahead');
    for (const edge of [nowSeconds - 300, nowSeconds + 300]) {
      expect(verifySignature(stripe, { headers: headers({ 'Stripe-Signature': header({ timestamp: edge }) }), body }, NOW)).toEqual({ ok: true });
    }
  });

  it('takes its tolerance from the attribute', () => {
    const strict = signature({ scheme: 'stripe', secret, tolerance: '30s' });
    const value = header({ timestamp: nowSeconds - 31 });
    expectRefused(verifySignature(strict, { headers: headers({ 'Stripe-Signature': value }), body }, NOW), 'timestamp-outside-tolerance', [value]);
    const lenient = signature({ scheme: 'stripe', secret, tolerance: '1h' });
    expect(verifySignature(lenient, { headers: headers({ 'Stripe-Signature': header({ timestamp: nowSeconds - 3599 }) }), body }, NOW)).toEqual({ ok: true });
  });
});

describe('slack: X-Slack-Signature: v0=<hex> over v0:<timestamp>:<body>', () => {
  const secret = 'slack-signing-secret-abcdef';
  const slack = signature({ scheme: 'slack', secret });
  // Slack's documented recipe ("Verifying requests from Slack"): HMAC-SHA256 of v0:ts:body, in hex, after v0=.
  const recipe = (key: string, ts: number | string, bytes: Buffer) => 'v0=' + createHmac('sha256', key).update(`v0:${ts}:`).update(bytes).digest('hex');
  const signed = (ts: number | string, value = recipe(secret, ts, body)) => headers({ 'X-Slack-Signature': value, 'X-Slack-Request-Timestamp': String(ts) });

  it("matches the example in Slack's documentation", () => {
    const example = signature({ scheme: 'slack', secret: '8f742231b10e8888abcd99yyyzzz85a5', tolerance: '596h' });
    const exampleBody = Buffer.from(
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
    );
    const request = { 'X-Slack-Signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503', 'X-Slack-Request-Timestamp': '1531420618' };
    // The example's clock: its own timestamp (the tolerance is what refuses it today).
    expect(verifySignature(example, { headers: headers(request), body: exampleBody }, 1531420618_000)).toEqual({ ok: true });
    expectRefused(verifySignature(example, { headers: headers(request), body: exampleBody }, NOW), 'timestamp-outside-tolerance', [
      '1531420618',
      'a2114d57b48e',
    ]);
  });

  it('accepts the recipe and refuses a tampered byte and another secret', () => {
    expect(verifySignature(slack, { headers: signed(nowSeconds), body }, NOW)).toEqual({ ok: true });
    expectRefused(verifySignature(slack, { headers: signed(nowSeconds), body: tampered(body) }, NOW), 'no-match', [recipe(secret, nowSeconds, body), secret]);
    const forged = recipe('wrong', nowSeconds, body);
    expectRefused(verifySignature(slack, { headers: signed(nowSeconds, forged), body }, NOW), 'no-match', [forged, secret]);
    // The timestamp is signed: moving it invalidates the signature even inside the tolerance.
    expectRefused(
      verifySignature(
        slack,
        { headers: headers({ 'X-Slack-Signature': recipe(secret, nowSeconds, body), 'X-Slack-Request-Timestamp': String(nowSeconds + 1) }), body },
        NOW,
      ),
      'no-match',
      [secret],
    );
  });

  it('refuses a missing signature, a missing timestamp and malformed ones', () => {
    const value = recipe(secret, nowSeconds, body);
    expectRefused(verifySignature(slack, { headers: headers({ 'X-Slack-Request-Timestamp': String(nowSeconds) }), body }, NOW), 'missing-header', [secret]);
    expectRefused(verifySignature(slack, { headers: headers({ 'X-Slack-Signature': value }), body }, NOW), 'missing-header', [value, secret]);
    for (const bad of [value.slice(3), `v1=${value.slice(3)}`, `${value.slice(0, -2)}xx`]) {
      expectRefused(verifySignature(slack, { headers: signed(nowSeconds, bad), body }, NOW), 'malformed-header', [bad, secret]);
    }
    for (const ts of [`${nowSeconds}.5`, ' 1', 'yesterday', `${nowSeconds}e0`]) {
      expectRefused(verifySignature(slack, { headers: signed(ts, recipe(secret, ts, body)), body }, NOW), 'malformed-header', [ts.trim(), secret]);
    }
  });

  it('refuses a stale and a future timestamp, correctly signed', () => {
    expectRefused(verifySignature(slack, { headers: signed(nowSeconds - 600), body }, NOW), 'timestamp-outside-tolerance', [String(nowSeconds - 600), secret]);
    expectRefused(verifySignature(slack, { headers: signed(nowSeconds + 600), body }, NOW), 'timestamp-outside-tolerance', [String(nowSeconds + 600), secret]);
  });
});

describe('standard: webhook-id, webhook-timestamp, webhook-signature: v1,<b64> (and svix-…)', () => {
  const secret = 'whsec_' + Buffer.from('standard-webhooks-test-key-32byt').toString('base64');
  const standard = signature({ scheme: 'standard', secret });
  const library = new Webhook(secret);
  const id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
  const signed = (prefix: 'webhook' | 'svix', ts = nowSeconds, by = library, bytes = body) => ({
    [`${prefix}-id`]: id,
    [`${prefix}-timestamp`]: String(ts),
    [`${prefix}-signature`]: by.sign(id, new Date(ts * 1000), bytes.toString('utf8')),
  });

  it("matches the Standard Webhooks specification's example", () => {
    const example = signature({ scheme: 'standard', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
    const request = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    expect(verifySignature(example, { headers: headers(request), body: Buffer.from('{"test": 2432232314}') }, 1614265330_000)).toEqual({ ok: true });
  });

  it('accepts what the standardwebhooks library signs, under both header families', () => {
    expect(verifySignature(standard, { headers: headers(signed('webhook')), body }, NOW)).toEqual({ ok: true });
    expect(verifySignature(standard, { headers: headers(signed('svix')), body }, NOW)).toEqual({ ok: true });
  });

  it('accepts when any v1 of a space-separated list matches, skipping other versions', () => {
    const other = new Webhook('whsec_' + Buffer.from('another-key').toString('base64'));
    const mine = signed('webhook')['webhook-signature']!;
    const theirs = signed('webhook', nowSeconds, other)['webhook-signature']!;
    const list = `v1a,c29tZSBhc3ltbWV0cmljIHNpZ25hdHVyZQ== ${theirs} ${mine}`;
    expect(verifySignature(standard, { headers: headers({ ...signed('webhook'), 'webhook-signature': list }), body }, NOW)).toEqual({ ok: true });
    expectRefused(verifySignature(standard, { headers: headers({ ...signed('webhook'), 'webhook-signature': theirs }), body }, NOW), 'no-match', [
      theirs,
      secret,
    ]);
  });

  it('refuses a tampered byte, another secret and another id', () => {
    const good = signed('webhook');
    expectRefused(verifySignature(standard, { headers: headers(good), body: tampered(body) }, NOW), 'no-match', [good['webhook-signature']!, secret]);
    const forged = signed('webhook', nowSeconds, new Webhook('whsec_' + Buffer.from('wrong-key').toString('base64')));
    expectRefused(verifySignature(standard, { headers: headers(forged), body }, NOW), 'no-match', [forged['webhook-signature']!, secret]);
    expectRefused(verifySignature(standard, { headers: headers({ ...good, 'webhook-id': 'msg_other' }), body }, NOW), 'no-match', ['msg_other', id, secret]);
  });

  it('refuses missing headers, a mix of families, and malformed ones', () => {
    const good = signed('webhook');
    const without = (name: string) => Object.fromEntries(Object.entries(good).filter(([n]) => n !== name));
    for (const name of Object.keys(good))
      expectRefused(verifySignature(standard, { headers: headers(without(name)), body }, NOW), 'missing-header', [id, secret]);
    const mixed = { 'svix-id': id, 'webhook-timestamp': String(nowSeconds), 'webhook-signature': good['webhook-signature']! };
    expectRefused(verifySignature(standard, { headers: headers(mixed), body }, NOW), 'missing-header', [id]);
    const sig = good['webhook-signature']!;
    for (const [name, value] of [
      ['webhook-signature', sig.slice(3)],
      ['webhook-signature', `v2,${sig.slice(3)}`],
      ['webhook-signature', `v1,${sig.slice(3, 20)}`],
      ['webhook-signature', `v1,${sig.slice(3, -4)}@@@=`],
      ['webhook-timestamp', `${nowSeconds}.0`],
      ['webhook-id', ''],
    ] as const) {
      expectRefused(verifySignature(standard, { headers: headers({ ...good, [name]: value }), body }, NOW), 'malformed-header', [value, sig.slice(3), secret]);
    }
  });

  it('refuses a stale and a future timestamp, signed by the library for that time', () => {
    for (const ts of [nowSeconds - 301, nowSeconds + 301]) {
      expectRefused(verifySignature(standard, { headers: headers(signed('svix', ts)), body }, NOW), 'timestamp-outside-tolerance', [String(ts), secret]);
    }
  });

  it('rotation: the second secret matches; a stale delivery under the right key reports the tolerance', () => {
    const old = signature({ scheme: 'standard', secret: 'whsec_' + Buffer.from('old-key-old-key').toString('base64') });
    expect(verifySignatures([old, standard], { headers: headers(signed('webhook')), body }, NOW)).toEqual({ ok: true });
    expectRefused(verifySignatures([old, standard], { headers: headers(signed('webhook', nowSeconds - 3600)), body }, NOW), 'timestamp-outside-tolerance', [
      secret,
    ]);
  });
});
