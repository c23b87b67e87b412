// The generic schemes described by attributes (hmac with a `signed` template, ed25519,
// ecdsa-p256): a sender that is not listed, written with the template, verifies as its recipe
// says; problems are reported at their attribute (an unknown placeholder with the closest one, a
// public key that is missing or does not parse); public keys are read as senders publish them.
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { closest } from '../../src/compiler/suggest.js';
import { describeSignature, type SignatureAttributes, type SignatureProblem } from '../../src/webhooks/describe-signature.js';
import { readPublicKey } from '../../src/webhooks/public-key.js';
import { verifySignature } from '../../src/webhooks/verify-signature.js';
import { NOW, expectRefused, headers, nowSeconds, signature, tampered } from './support.js';

const secret = 'acme-secret-0123';
const body = Buffer.from('{"event":"order.paid","id":42}');
const mac = (data: string, encoding: 'hex' | 'base64' = 'hex') => createHmac('sha256', secret).update(data).digest(encoding);

function problems(attributes: SignatureAttributes): readonly SignatureProblem[] {
  const outcome = describeSignature(attributes, closest);
  expect(outcome.ok).toBe(false);
  return outcome.ok ? [] : outcome.problems;
}
const brief = (list: readonly SignatureProblem[]) => list.map((p) => `${p.code} ${p.attribute}`);

describe('hmac with a template', () => {
  const acme = signature({
    scheme: 'hmac',
    secret,
    header: 'X-Acme-Signature',
    prefix: 'v1=',
    timestampHeader: 'X-Acme-Timestamp',
    signed: '{timestamp}.{body}',
    tolerance: '3m',
  });
  const sent = (ts: number, bytes = body, value = `v1=${mac(`${ts}.${bytes.toString()}`)}`) => ({
    headers: headers({ 'X-Acme-Signature': value, 'X-Acme-Timestamp': String(ts) }),
    body: bytes,
  });

  it('accepts the recipe; refuses a tampered byte, another secret, a stale timestamp and a missing prefix', () => {
    expect(verifySignature(acme, sent(nowSeconds), NOW)).toEqual({ ok: true });
    expectRefused(verifySignature(acme, { ...sent(nowSeconds), body: tampered(body) }, NOW), 'no-match', [secret]);
    const forged = `v1=${createHmac('sha256', 'other').update(`${nowSeconds}.${body.toString()}`).digest('hex')}`;
    expectRefused(verifySignature(acme, sent(nowSeconds, body, forged), NOW), 'no-match', [forged]);
    expectRefused(verifySignature(acme, sent(nowSeconds - 181), NOW), 'timestamp-outside-tolerance', []);
    expectRefused(verifySignature(acme, sent(nowSeconds, body, mac(`${nowSeconds}.${body.toString()}`)), NOW), 'malformed-header', []);
    expectRefused(verifySignature(acme, { headers: headers({ 'X-Acme-Signature': 'v1=00' }), body }, NOW), 'missing-header', []);
  });

  it('reads the signature and the timestamp from the fields of one header, with ; between them', () => {
    const structured = signature({
      scheme: 'hmac',
      secret,
      header: 'Acme-Signature',
      signatureField: 's',
      timestampField: 't',
      separator: ';',
      encoding: 'base64',
      signed: '{timestamp}:{url}:{body}',
    });
    const url = 'https://hooks.example/acme?x=1';
    const value = `t=${nowSeconds};s=${mac(`${nowSeconds}:${url}:${body.toString()}`, 'base64')}`;
    const request = { headers: headers({ 'Acme-Signature': value }), body, url };
    expect(verifySignature(structured, request, NOW)).toEqual({ ok: true });
    expectRefused(verifySignature(structured, { ...request, url: 'https://elsewhere.example/acme?x=1' }, NOW), 'no-match', []);
    expectRefused(verifySignature(structured, { ...request, headers: headers({ 'Acme-Signature': value.replace(';', ',') }) }, NOW), 'malformed-header', []);
  });

  it('signs a header, the method, and a timestamp in milliseconds or RFC 3339', () => {
    const ms = signature({
      scheme: 'hmac',
      secret,
      header: 'X-Sig',
      timestampHeader: 'X-Ts',
      timestampFormat: 'milliseconds',
      signed: '{method}{header:X-Tenant}{timestamp}{body}',
    });
    const value = mac(`PUT` + 'tenant-7' + String(NOW) + body.toString());
    const request = { headers: headers({ 'X-Sig': value, 'X-Ts': String(NOW), 'X-Tenant': 'tenant-7' }), body, method: 'PUT' };
    expect(verifySignature(ms, request, NOW)).toEqual({ ok: true });
    expectRefused(verifySignature(ms, { ...request, headers: headers({ 'X-Sig': value, 'X-Ts': String(NOW) }) }, NOW), 'missing-header', []);
    const iso = signature({ scheme: 'hmac', secret, header: 'X-Sig', timestampHeader: 'X-Ts', timestampFormat: 'rfc3339', signed: '{timestamp}{body}' });
    const date = '2026-11-26T11:58:00.123456789Z';
    expect(verifySignature(iso, { headers: headers({ 'X-Sig': mac(date + body.toString()), 'X-Ts': date }), body }, NOW)).toEqual({ ok: true });
    expectRefused(
      verifySignature(iso, { headers: headers({ 'X-Sig': mac('yesterday' + body.toString()), 'X-Ts': 'yesterday' }), body }, NOW),
      'malformed-header',
      [],
    );
  });
});

describe('a signature in the JSON body', () => {
  it('reads the signature, the timestamp and a signed field from the body by JSON pointer', () => {
    const inBody = signature({ scheme: 'hmac', secret, header: 'json:/sig/value', timestampHeader: 'json:/sig/ts', signed: '{timestamp}:{json:/sig/nonce}' });
    const make = (nonce: string, value = mac(`${nowSeconds}:${nonce}`)) => Buffer.from(JSON.stringify({ sig: { ts: nowSeconds, nonce, value }, data: 1 }));
    expect(verifySignature(inBody, { headers: headers({}), body: make('n-1') }, NOW)).toEqual({ ok: true });
    expect(verifySignature(inBody, { headers: headers({}), body: make('n-1'), json: JSON.parse(make('n-1').toString()) }, NOW)).toEqual({ ok: true });
    const forged = Buffer.from(make('n-1').toString().replace('n-1', 'n-2'));
    expectRefused(verifySignature(inBody, { headers: headers({}), body: forged }, NOW), 'no-match', []);
    const missing = verifySignature(inBody, { headers: headers({}), body: Buffer.from('{"data":1}') }, NOW);
    expectRefused(missing, 'missing-header', []);
    expect(!missing.ok && missing.detail).toContain("the body's /sig/value field is missing");
    expectRefused(verifySignature(inBody, { headers: headers({}), body: Buffer.from('not json') }, NOW), 'missing-header', []);
    expect(brief(problems({ scheme: 'hmac', secret, header: 'json:sig' }))).toEqual(['invalid-value header']);
  });
});

describe('problems of the generic schemes, at their attribute', () => {
  it('an unknown placeholder, with the closest one', () => {
    const [problem] = problems({ scheme: 'hmac', secret, header: 'X-Sig', timestampHeader: 'X-Ts', signed: '{timestmp}.{body}' });
    expect(problem).toMatchObject({ code: 'invalid-signed-template', attribute: 'signed' });
    expect(problem!.message).toContain('Did you mean {timestamp}?');
    expect(brief(problems({ scheme: 'hmac', secret, header: 'X-Sig', signed: '{body' }))).toEqual(['invalid-signed-template signed']);
  });

  it('a timestamp signed but not read, read but not signed, and an id without its header', () => {
    expect(brief(problems({ scheme: 'hmac', secret, header: 'X-Sig', signed: '{timestamp}{body}' }))).toEqual(['invalid-signed-template signed']);
    expect(brief(problems({ scheme: 'hmac', secret, header: 'X-Sig', timestampHeader: 'X-Ts' }))).toEqual(['invalid-signed-template signed']);
    expect(brief(problems({ scheme: 'hmac', secret, header: 'X-Sig', signed: '{id}{body}' }))).toEqual(['invalid-signed-template signed']);
    expect(brief(problems({ scheme: 'hmac', secret, header: 'X-Sig', timestampFormat: 'seconds' }))).toEqual(['attribute-not-for-scheme timestamp-format']);
  });

  it('a public-key scheme without its key, with a key that does not parse, or given a secret', () => {
    expect(brief(problems({ scheme: 'discord' }))).toEqual(['missing-attribute public-key']);
    expect(brief(problems({ scheme: 'ed25519', header: 'X-Sig' }))).toEqual(['missing-attribute public-key']);
    expect(brief(problems({ scheme: 'sendgrid', publicKey: 'not a key' }))).toEqual(['invalid-public-key public-key']);
    const ed = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(brief(problems({ scheme: 'sendgrid', publicKey: ed }))).toEqual(['invalid-public-key public-key']);
    expect(brief(problems({ scheme: 'discord', publicKey: ed, secret }))).toEqual(['attribute-not-for-scheme secret']);
    expect(brief(problems({ scheme: 'github', publicKey: ed, secret }))).toEqual(['attribute-not-for-scheme public-key']);
    expect(brief(problems({ scheme: 'ecdsa-p256', header: 'X-Sig', algorithm: 'sha256', publicKey: 'x' }))).toEqual([
      'attribute-not-for-scheme algorithm',
      'invalid-public-key public-key',
    ]);
  });

  it('a named sender takes only its key, and its tolerance when it signs a timestamp', () => {
    expect(brief(problems({ scheme: 'twilio', secret, header: 'X-Sig', signed: '{body}' }))).toEqual([
      'attribute-not-for-scheme header',
      'attribute-not-for-scheme signed',
    ]);
    expect(brief(problems({ scheme: 'twilio', secret, tolerance: '1m' }))).toEqual(['attribute-not-for-scheme tolerance']);
    expect(describeSignature({ scheme: 'paddle', secret, tolerance: '1m' }, closest).ok).toBe(true);
  });
});

describe('public keys as senders publish them', () => {
  it('reads Ed25519 in hex, base64, whpk_, PEM and DER, and P-256 in base64 DER, PEM and the raw point', () => {
    const ed = generateKeyPairSync('ed25519').publicKey;
    const raw = Buffer.from(ed.export({ format: 'jwk' }).x!, 'base64url');
    const der = ed.export({ type: 'spki', format: 'der' });
    for (const text of [
      raw.toString('hex'),
      raw.toString('base64'),
      `whpk_${raw.toString('base64')}`,
      der.toString('base64'),
      der.toString('hex'),
      ed.export({ type: 'spki', format: 'pem' }).toString(),
    ])
      expect(readPublicKey(text, 'ed25519')?.equals(ed), text).toBe(true);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    const jwk = ec.export({ format: 'jwk' });
    const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
    for (const text of [
      ec.export({ type: 'spki', format: 'der' }).toString('base64'),
      ec.export({ type: 'spki', format: 'pem' }).toString(),
      point.toString('base64'),
      point.toString('hex'),
    ])
      expect(readPublicKey(text, 'ecdsa-p256')?.equals(ec), text).toBe(true);
    expect(readPublicKey(raw.toString('hex'), 'ecdsa-p256')).toBeNull();
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(readPublicKey(p384, 'ecdsa-p256')).toBeNull();
  });

  it('verifies ECDSA in DER and as r and s side by side', () => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ecdsa = signature({
      scheme: 'ecdsa-p256',
      header: 'X-Sig',
      encoding: 'base64',
      publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    });
    for (const dsaEncoding of ['der', 'ieee-p1363'] as const) {
      const value = sign('sha256', body, { key: privateKey, dsaEncoding }).toString('base64');
      expect(verifySignature(ecdsa, { headers: headers({ 'X-Sig': value }), body }, NOW)).toEqual({ ok: true });
      expectRefused(verifySignature(ecdsa, { headers: headers({ 'X-Sig': value }), body: tampered(body) }, NOW), 'no-match', []);
    }
  });
});
