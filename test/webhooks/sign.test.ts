// Standard Webhooks signing for relays: what sign.ts produces verifies with the standardwebhooks
// library (what a receiver runs) and with this service's own verification, under the same id
// across attempts with a fresh timestamp each; the specification's example comes out exactly.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signStandardWebhook, standardSigningKey } from '../../src/webhooks/sign.js';
import { verifySignature } from '../../src/webhooks/verify-signature.js';
import { headers, signature } from './support.js';

const secret = 'whsec_' + Buffer.from('relay-signing-key-of-32-bytes!!!').toString('base64');

function key(text = secret) {
  const outcome = standardSigningKey(text);
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.key;
}

describe('signStandardWebhook', () => {
  const body = Buffer.from(JSON.stringify({ type: 'order.paid', order: { id: 7, customer: 'Zoë' } }));

  it("produces the Standard Webhooks specification's example signature", () => {
    const signed = signStandardWebhook(
      key('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'),
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330_000,
      Buffer.from('{"test": 2432232314}'),
    );
    expect(signed).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it("verifies with the standardwebhooks library's Webhook.verify, on two attempts with one id", () => {
    const receiver = new Webhook(secret);
    const id = 'msg_relay_0001';
    // On a whole second, so 61.5 s later is always 61 whole seconds later.
    const now = Math.floor(Date.now() / 1000) * 1000;
    const first = signStandardWebhook(key(), id, now, body);
    const retry = signStandardWebhook(key(), id, now + 61_500, body);
    expect(receiver.verify(body.toString('utf8'), { ...first })).toEqual(JSON.parse(body.toString('utf8')));
    expect(retry['webhook-id']).toBe(first['webhook-id']);
    expect(Number(retry['webhook-timestamp']) - Number(first['webhook-timestamp'])).toBe(61);
    expect(retry['webhook-signature']).not.toBe(first['webhook-signature']);
    // The library checks its own clock: the retry, sent a minute "later", is still within its 5 minutes.
    expect(receiver.verify(body.toString('utf8'), { ...retry })).toEqual(JSON.parse(body.toString('utf8')));
  });

  it('is refused by the library when the body or the secret differs', () => {
    const signed = signStandardWebhook(key(), 'msg_relay_0002', Date.now(), body);
    expect(() => new Webhook(secret).verify(body.toString('utf8').replace('Zoë', 'Zoe'), { ...signed })).toThrow(/No matching signature/);
    expect(() => new Webhook('whsec_' + Buffer.from('another').toString('base64')).verify(body.toString('utf8'), { ...signed })).toThrow(
      /No matching signature/,
    );
  });

  it("verifies with this service's own standard scheme, over the exact bytes", () => {
    const now = Date.UTC(2026, 10, 26, 13, 0, 0);
    const binary = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x0a]);
    const signed = signStandardWebhook(key(), 'msg_bytes', now, binary);
    expect(verifySignature(signature({ scheme: 'standard', secret }), { headers: headers({ ...signed }), body: binary }, now)).toEqual({ ok: true });
  });

  it('refuses a secret that is not base64, and an id that could not travel in a header', () => {
    const bad = standardSigningKey('whsec_not base64!');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.message).not.toContain('not base64!');
    for (const id of ['', 'has space', 'a,b', 'line\nbreak', 'ünï']) expect(() => signStandardWebhook(key(), id, Date.now(), body), id).toThrow(RangeError);
  });
});

describe('a secret made as docs/language.md (`<sign>`) says', () => {
  const docs = readFileSync(fileURLToPath(new URL('../../docs/language.md', import.meta.url)), 'utf8');
  const section = docs.slice(docs.indexOf('### `<sign>` (extension)'), docs.indexOf('### `<from>`'));

  it('node: whsec_ and 32 random bytes in base64 is a signing secret', () => {
    const script = /node -e "(.+?)"\)"/.exec(section)![1]!;
    const made = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(made.status).toBe(0);
    const secret = `whsec_${made.stdout.trim()}`;
    expect(standardSigningKey(secret).ok).toBe(true);
  });

  it('openssl rand -base64 32 gives one too', () => {
    expect(section).toContain('whsec_$(openssl rand -base64 32)');
    const made = spawnSync('openssl', ['rand', '-base64', '32'], { encoding: 'utf8' });
    if (made.status !== 0) return;
    expect(standardSigningKey(`whsec_${made.stdout.trim()}`).ok).toBe(true);
  });
});
