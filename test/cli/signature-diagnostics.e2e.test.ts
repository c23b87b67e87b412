// validate on <signature>, through the binary: a misspelt sender gets a "did you mean", and a
// public-key scheme without its key, a key that does not parse and a template with an unknown
// placeholder are errors at their attribute (or at the element, for what is missing), each with
// its code; a correct file of named senders and a template validates clean.
import path from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, positionOf, removeDir, run, tempApp } from './helpers.js';

const dirs: string[] = [];
beforeAll(assertBuilt);
afterAll(() => dirs.forEach(removeDir));

const wrap = (signature: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<endpoint-folder>\n  <endpoint name="hook">\n    ${signature}\n    <success><response-body>ok</response-body></success>\n  </endpoint>\n</endpoint-folder>\n`;

async function validate(xml: string, env: Record<string, string> = {}): Promise<{ code: number; out: string; file: string }> {
  const dir = tempApp({ 'endpoints.xml': xml });
  dirs.push(dir);
  const file = path.join(dir, 'endpoints.xml');
  const r = await run(['validate', '--no-color', file], { env });
  return { code: r.exitCode ?? -1, out: r.stdout + r.stderr, file };
}

/** An error of `code` at `needle` (the attribute's name, or the element's start) in the file, with its message containing `says`. */
function expectErrorAt(result: { out: string; file: string }, xml: string, needle: string, code: string, says: string): void {
  const { line, column } = positionOf(xml, needle);
  const printed = result.out.split('\n').find((l) => l.includes(`${result.file}:${line}:${column}  error  ${code}`));
  expect(printed, result.out).toBeDefined();
  expect(printed).toContain(says);
}

describe('validate and <signature>', () => {
  it('suggests the sender a misspelt scheme is closest to', async () => {
    const xml = wrap('<signature scheme="twillio" secret="${env:TOKEN}"/>');
    const r = await validate(xml, { TOKEN: 'x' });
    expect(r.code).toBe(1);
    expectErrorAt(r, xml, 'scheme="twillio"', 'unknown-signature-scheme', 'Did you mean "twilio"?');
  });

  it('requires the public key of a public-key scheme, at the element', async () => {
    const xml = wrap('<signature scheme="discord"/>');
    const r = await validate(xml);
    expect(r.code).toBe(1);
    expectErrorAt(r, xml, '<signature', 'missing-attribute', 'public-key');
  });

  it('refuses a public key that does not parse, at the attribute, without quoting it', async () => {
    const xml = wrap('<signature scheme="sendgrid" public-key="${env:SENDGRID_KEY}"/>');
    const r = await validate(xml, { SENDGRID_KEY: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEnot-a-key' });
    expect(r.code).toBe(1);
    expectErrorAt(r, xml, 'public-key=', 'invalid-public-key', 'not an ECDSA P-256 public key');
    expect(r.out).not.toContain('MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEnot-a-key');
  });

  it('refuses a template with an unknown placeholder, at the attribute, suggesting the closest', async () => {
    const xml = wrap('<signature scheme="hmac" secret="${env:S}" header="X-Sig" timestamp-header="X-Ts" signed="{timestmap}.{body}"/>');
    const r = await validate(xml, { S: 'x' });
    expect(r.code).toBe(1);
    expectErrorAt(r, xml, 'signed=', 'invalid-signed-template', 'Did you mean {timestamp}?');
  });

  it('refuses a secret on a public-key scheme and a header on a named sender, each at its attribute', async () => {
    const xml = wrap('<signature scheme="discord" public-key="${env:K}" secret="${env:S}" header="X-Other"/>');
    const key = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' }).toString('hex');
    const r = await validate(xml, { K: key, S: 'x' });
    expect(r.code).toBe(1);
    expectErrorAt(r, xml, 'secret=', 'attribute-not-for-scheme', 'public key');
    expectErrorAt(r, xml, 'header="X-Other"', 'attribute-not-for-scheme', 'header');
  });

  it('passes named senders and a template written correctly, a literal public key without a warning', async () => {
    const key = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    const xml = wrap(
      [
        '<signature scheme="twilio" secret="${env:S}"/>',
        `<signature scheme="discord" public-key="${key}"/>`,
        '<signature scheme="paddle" secret="${env:S}" tolerance="1m"/>',
        '<signature scheme="hmac" secret="${env:S}" header="X-Acme-Signature" prefix="v1=" timestamp-header="X-Acme-Timestamp" signed="{timestamp}.{body}"/>',
      ].join('\n    '),
    );
    const r = await validate(xml, { S: 'x' });
    expect(r.out).toContain('0 errors, 0 warnings');
    expect(r.code).toBe(0);
  });
});
