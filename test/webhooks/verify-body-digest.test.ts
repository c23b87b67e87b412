// Signatures over the body alone (github, shopify, hmac) and a shared token (token): each accepts
// what its sender makes, by the sender's own library or its documented recipe, and refuses a
// tampered byte, another secret, a missing and a malformed header, with a detail that quotes
// neither the header nor the secret. Also secret rotation: any of several signatures passes.
import { createHmac } from 'node:crypto';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { verifySignature, verifySignatures } from '../../src/webhooks/verify-signature.js';
import { NOW, expectRefused, headers, signature, tampered } from './support.js';

const body = Buffer.from(JSON.stringify({ action: 'opened', issue: { number: 26, title: 'Trust webhooks — ünïcode' } }));

describe('github: X-Hub-Signature-256: sha256=<hex>', () => {
  const secret = 'gh-secret-0123456789';
  const github = signature({ scheme: 'github', secret });

  it("matches GitHub's documented test vector", () => {
    // docs.github.com, "Validating webhook deliveries", "Testing the webhook payload validation".
    const vector = signature({ scheme: 'github', secret: "It's a Secret to Everybody" });
    const signed = { 'X-Hub-Signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' };
    expect(verifySignature(vector, { headers: headers(signed), body: Buffer.from('Hello, World!') }, NOW)).toEqual({ ok: true });
  });

  it('accepts what @octokit/webhooks-methods signs', async () => {
    const header = await octokitSign(secret, body.toString('utf8'));
    expect(verifySignature(github, { headers: headers({ 'X-Hub-Signature-256': header }), body }, NOW)).toEqual({ ok: true });
    // Header names arrive lower-cased from node:http: the record is read that way whatever was configured.
    expect(verifySignature(github, { headers: { 'x-hub-signature-256': [header] }, body }, NOW)).toEqual({ ok: true });
  });

  it('refuses a tampered byte and another secret as no-match', async () => {
    const header = await octokitSign(secret, body.toString('utf8'));
    expectRefused(verifySignature(github, { headers: headers({ 'X-Hub-Signature-256': header }), body: tampered(body) }, NOW), 'no-match', [header, secret]);
    const forged = await octokitSign('another-secret', body.toString('utf8'));
    expectRefused(verifySignature(github, { headers: headers({ 'X-Hub-Signature-256': forged }), body }, NOW), 'no-match', [forged, secret]);
  });

  it('refuses a missing header, and the legacy SHA-1 header alone', async () => {
    expectRefused(verifySignature(github, { headers: headers({}), body }, NOW), 'missing-header', [secret]);
    const sha1 = 'sha1=' + createHmac('sha1', secret).update(body).digest('hex');
    const result = verifySignature(github, { headers: headers({ 'X-Hub-Signature': sha1 }), body }, NOW);
    expectRefused(result, 'missing-header', [sha1, secret]);
    expect(!result.ok && result.detail).toContain('X-Hub-Signature-256');
  });

  it('refuses malformed headers: no prefix, not hex, too short, sent twice', async () => {
    const good = await octokitSign(secret, body.toString('utf8'));
    const hex = good.slice('sha256='.length);
    for (const value of [hex, `sha256=${hex.slice(0, 62)}zz`, `sha256=${hex.slice(0, 40)}`, `sha1=${hex}`, '']) {
      expectRefused(verifySignature(github, { headers: headers({ 'X-Hub-Signature-256': value }), body }, NOW), 'malformed-header', [value, hex, secret]);
    }
    expectRefused(verifySignature(github, { headers: headers({ 'X-Hub-Signature-256': [good, good] }), body }, NOW), 'malformed-header', [hex, secret]);
  });
});

describe('shopify: X-Shopify-Hmac-Sha256: <base64>', () => {
  const secret = 'shpss_0123456789abcdef';
  const shopify = signature({ scheme: 'shopify', secret });
  // Shopify's documented recipe: base64 of the HMAC-SHA256 of the raw body with the app's secret.
  const recipe = (key: string, bytes: Buffer) => createHmac('sha256', key).update(bytes).digest('base64');

  it('accepts the documented recipe', () => {
    expect(verifySignature(shopify, { headers: headers({ 'X-Shopify-Hmac-Sha256': recipe(secret, body) }), body }, NOW)).toEqual({ ok: true });
  });

  it('refuses a tampered byte, another secret, a missing header and malformed ones', () => {
    const good = recipe(secret, body);
    expectRefused(verifySignature(shopify, { headers: headers({ 'X-Shopify-Hmac-Sha256': good }), body: tampered(body) }, NOW), 'no-match', [good, secret]);
    const forged = recipe('other', body);
    expectRefused(verifySignature(shopify, { headers: headers({ 'X-Shopify-Hmac-Sha256': forged }), body }, NOW), 'no-match', [forged, secret]);
    expectRefused(verifySignature(shopify, { headers: headers({}), body }, NOW), 'missing-header', [secret]);
    const hex = createHmac('sha256', secret).update(body).digest('hex');
    for (const value of [hex, `${good.slice(0, 20)}!!${good.slice(22)}`, good.slice(0, 24), `sha256=${good}`]) {
      expectRefused(verifySignature(shopify, { headers: headers({ 'X-Shopify-Hmac-Sha256': value }), body }, NOW), 'malformed-header', [value, secret]);
    }
  });
});

describe('hmac: a configured header, prefix, algorithm and encoding', () => {
  const secret = 'generic-secret-42';

  it.each([
    ['sha256', 'hex', ''],
    ['sha1', 'hex', 'sha1='],
    ['sha512', 'base64', 'v1='],
    ['sha256', 'base64', 'sha256='],
  ] as const)('accepts %s in %s after the prefix "%s"', (algorithm, encoding, prefix) => {
    const hmac = signature({ scheme: 'hmac', secret, header: 'X-Signature', algorithm, encoding, prefix });
    const value = prefix + createHmac(algorithm, secret).update(body).digest(encoding);
    expect(verifySignature(hmac, { headers: headers({ 'x-signature': value }), body }, NOW)).toEqual({ ok: true });
    expectRefused(verifySignature(hmac, { headers: headers({ 'x-signature': value }), body: tampered(body) }, NOW), 'no-match', [value, secret]);
  });

  it('defaults to sha256 in hex without a prefix', () => {
    const hmac = signature({ scheme: 'hmac', secret, header: 'X-Signature' });
    const value = createHmac('sha256', secret).update(body).digest('hex');
    expect(verifySignature(hmac, { headers: headers({ 'X-Signature': value }), body }, NOW)).toEqual({ ok: true });
    // Some senders write hex in capitals: the digest is compared as bytes, not as text.
    expect(verifySignature(hmac, { headers: headers({ 'X-Signature': value.toUpperCase() }), body }, NOW)).toEqual({ ok: true });
  });

  it('refuses another secret, a missing header, a missing prefix and a digest of another algorithm', () => {
    const hmac = signature({ scheme: 'hmac', secret, header: 'X-Signature', prefix: 'sha256=' });
    const forged = 'sha256=' + createHmac('sha256', 'wrong').update(body).digest('hex');
    expectRefused(verifySignature(hmac, { headers: headers({ 'X-Signature': forged }), body }, NOW), 'no-match', [forged, secret]);
    expectRefused(verifySignature(hmac, { headers: headers({ 'X-Other': forged }), body }, NOW), 'missing-header', [secret]);
    const bare = createHmac('sha256', secret).update(body).digest('hex');
    expectRefused(verifySignature(hmac, { headers: headers({ 'X-Signature': bare }), body }, NOW), 'malformed-header', [bare, secret]);
    const sha1 = 'sha256=' + createHmac('sha1', secret).update(body).digest('hex');
    expectRefused(verifySignature(hmac, { headers: headers({ 'X-Signature': sha1 }), body }, NOW), 'malformed-header', [sha1, secret]);
  });
});

describe('token: the header holds the secret (GitLab)', () => {
  const secret = 'glpat-webhook-token-value';
  const token = signature({ scheme: 'token', secret, header: 'X-Gitlab-Token' });

  it('accepts the token, whatever the body', () => {
    expect(verifySignature(token, { headers: headers({ 'X-Gitlab-Token': secret }), body }, NOW)).toEqual({ ok: true });
    expect(verifySignature(token, { headers: headers({ 'X-Gitlab-Token': secret }), body: Buffer.alloc(0) }, NOW)).toEqual({ ok: true });
  });

  it('refuses another token, a prefix or extension of it, an empty one, a missing header and a repeated one', () => {
    for (const value of ['glpat-webhook-token-valuf', secret.slice(0, -1), `${secret}x`, ` ${secret}`, '']) {
      expectRefused(verifySignature(token, { headers: headers({ 'X-Gitlab-Token': value }), body }, NOW), 'no-match', [value, secret]);
    }
    expectRefused(verifySignature(token, { headers: headers({}), body }, NOW), 'missing-header', [secret]);
    expectRefused(verifySignature(token, { headers: headers({ 'X-Gitlab-Token': [secret, 'other'] }), body }, NOW), 'malformed-header', [secret]);
  });
});

describe('several signatures: secret rotation', () => {
  const old = signature({ scheme: 'github', secret: 'old-secret-0001' });
  const fresh = signature({ scheme: 'github', secret: 'new-secret-0002' });

  it('passes when the second secret matches, and when the first does', async () => {
    const byNew = await octokitSign('new-secret-0002', body.toString('utf8'));
    const byOld = await octokitSign('old-secret-0001', body.toString('utf8'));
    expect(verifySignatures([old, fresh], { headers: headers({ 'X-Hub-Signature-256': byNew }), body }, NOW)).toEqual({ ok: true });
    expect(verifySignatures([old, fresh], { headers: headers({ 'X-Hub-Signature-256': byOld }), body }, NOW)).toEqual({ ok: true });
  });

  it('refuses when neither matches, and reports the refusal that got furthest', async () => {
    const forged = await octokitSign('neither', body.toString('utf8'));
    expectRefused(verifySignatures([old, fresh], { headers: headers({ 'X-Hub-Signature-256': forged }), body }, NOW), 'no-match', [
      forged,
      'old-secret-0001',
      'new-secret-0002',
    ]);
    // Moving from a token to a signature: the token header is missing, the signature is checked and fails.
    const gitlab = signature({ scheme: 'token', secret: 'tok-tok-tok', header: 'X-Gitlab-Token' });
    expectRefused(verifySignatures([gitlab, fresh], { headers: headers({ 'X-Hub-Signature-256': forged }), body }, NOW), 'no-match', [forged]);
    expectRefused(verifySignatures([fresh, gitlab], { headers: headers({ 'X-Hub-Signature-256': forged }), body }, NOW), 'no-match', [forged]);
  });
});
