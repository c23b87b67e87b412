// The attributes of `<signature>` to a description, or to problems at the attribute they belong
// to: an unknown scheme with "did you mean", hmac and token without a header, what a scheme fixes
// given anyway, a bad tolerance, algorithm, encoding, header name or secret.
import { describe, expect, it } from 'vitest';
import { closest } from '../../src/compiler/suggest.js';
import { describeSignature, type SignatureAttributes, type SignatureProblem } from '../../src/webhooks/describe-signature.js';
import { SENDERS, senderEntry } from '../../src/webhooks/senders.js';
import { DEFAULT_TOLERANCE_MS, SIGNATURE_SCHEMES } from '../../src/webhooks/signature-description.js';
import { inspect } from 'node:util';

function problems(attributes: SignatureAttributes): readonly SignatureProblem[] {
  const outcome = describeSignature(attributes, closest);
  expect(outcome.ok).toBe(false);
  return outcome.ok ? [] : outcome.problems;
}
/** Every scheme that takes a `secret` (the others take a `public-key`), and those whose secret is `whsec_` and base64. */
const SECRET_SCHEMES = SIGNATURE_SCHEMES.filter((scheme) => !['ed25519', 'ecdsa-p256'].includes(scheme) && senderEntry(scheme)?.key !== 'public-key');
const WHSEC = new Set(SENDERS.filter((entry) => entry.key === 'whsec').map((entry) => entry.name));
const brief = (list: readonly SignatureProblem[]) => list.map((p) => `${p.code} ${p.attribute}`);

describe('describeSignature', () => {
  it('builds each scheme with only what it needs', () => {
    const github = describeSignature({ scheme: 'github', secret: 's3cret' }, closest);
    expect(github.ok && github.signature).toMatchObject({
      scheme: 'github',
      verifier: { kind: 'hmac', algorithm: 'sha256' },
      families: [{ signature: { name: 'X-Hub-Signature-256' }, timestamp: null, id: null }],
      format: { prefix: 'sha256=', field: null, list: false, encoding: 'hex' },
      signed: [{ kind: 'body' }],
      timestamp: null,
      toleranceMs: null,
    });
    const stripe = describeSignature({ scheme: 'stripe', secret: 'whsec_x' }, closest);
    expect(stripe.ok && stripe.signature).toMatchObject({ scheme: 'stripe', toleranceMs: DEFAULT_TOLERANCE_MS, timestamp: { field: 't', format: 'seconds' } });
    const hmac = describeSignature({ scheme: 'hmac', secret: 's', header: 'X-Sig' }, closest);
    expect(hmac.ok && hmac.signature).toMatchObject({
      scheme: 'hmac',
      verifier: { kind: 'hmac', algorithm: 'sha256' },
      families: [{ signature: { name: 'X-Sig', key: 'x-sig' }, timestamp: null, id: null }],
      format: { prefix: '', encoding: 'hex' },
      template: '{body}',
      toleranceMs: null,
    });
    const token = describeSignature({ scheme: 'token', secret: 't', header: 'X-Gitlab-Token' }, closest);
    expect(token.ok && Object.keys(token.signature).sort()).toEqual(['header', 'scheme', 'tokenDigest']);
    const slack = describeSignature({ scheme: 'slack', secret: 's', tolerance: '90s' }, closest);
    expect(slack.ok && slack.signature).toMatchObject({ scheme: 'slack', toleranceMs: 90_000 });
  });

  it('keeps the secret out of what a description prints as', () => {
    for (const scheme of SECRET_SCHEMES) {
      const secret = WHSEC.has(scheme) ? 'whsec_' + Buffer.from('very-secret-key-bytes').toString('base64') : 'very-secret-key-bytes';
      const outcome = describeSignature({ scheme, secret, header: scheme === 'hmac' || scheme === 'token' ? 'X-Sig' : undefined }, closest);
      expect(outcome.ok, scheme).toBe(true);
      const shown = inspect(outcome, { depth: 10 }) + JSON.stringify(outcome);
      expect(shown).not.toContain('very-secret-key-bytes');
      expect(shown).not.toContain(secret);
    }
  });

  it('refuses an unknown scheme, suggesting the closest', () => {
    const [problem] = problems({ scheme: 'githbu', secret: 's' });
    expect(problem).toMatchObject({ code: 'unknown-signature-scheme', attribute: 'scheme', suggestion: 'github' });
    expect(problem!.message).toContain('Did you mean "github"?');
    const [far] = problems({ scheme: 'paddle-billing', secret: 's' });
    expect(far).toMatchObject({ code: 'unknown-signature-scheme', suggestion: undefined });
    expect(far!.message).toContain('github, stripe, slack, shopify, standard, hmac, token');
  });

  it('requires a header for hmac and token', () => {
    expect(brief(problems({ scheme: 'hmac', secret: 's' }))).toEqual(['missing-attribute header']);
    expect(brief(problems({ scheme: 'token', secret: 's' }))).toEqual(['missing-attribute header']);
  });

  it('refuses header, algorithm, encoding and prefix on a scheme that fixes them, and tolerance where nothing is timed', () => {
    expect(
      brief(problems({ scheme: 'github', secret: 's', header: 'X-Hub-Signature', algorithm: 'sha1', encoding: 'hex', prefix: 'sha1=', tolerance: '5m' })),
    ).toEqual([
      'attribute-not-for-scheme header',
      'attribute-not-for-scheme algorithm',
      'attribute-not-for-scheme encoding',
      'attribute-not-for-scheme prefix',
      'attribute-not-for-scheme tolerance',
    ]);
    for (const scheme of ['stripe', 'slack', 'standard', 'shopify'] as const) {
      expect(brief(problems({ scheme, secret: 'whsec_c2VjcmV0', header: 'X-Other' }))).toEqual(['attribute-not-for-scheme header']);
    }
    expect(brief(problems({ scheme: 'token', secret: 's', header: 'X-Token', algorithm: 'sha256', prefix: 'Bearer ' }))).toEqual([
      'attribute-not-for-scheme algorithm',
      'attribute-not-for-scheme prefix',
    ]);
    expect(brief(problems({ scheme: 'hmac', secret: 's', header: 'X-Sig', tolerance: '5m' }))).toEqual(['attribute-not-for-scheme tolerance']);
  });

  it("refuses a bad tolerance with the duration parser's own advice", () => {
    const [bare] = problems({ scheme: 'stripe', secret: 's', tolerance: '300' });
    expect(bare).toMatchObject({ code: 'invalid-value', attribute: 'tolerance', value: '300' });
    expect(bare!.message).toContain('write 300ms or 300s');
    for (const tolerance of ['0s', 'five minutes', '1000h', ''])
      expect(brief(problems({ scheme: 'slack', secret: 's', tolerance }))).toEqual(['invalid-value tolerance']);
  });

  it('refuses an algorithm, an encoding or a header name hmac cannot use', () => {
    expect(brief(problems({ scheme: 'hmac', secret: 's', header: 'X-Sig', algorithm: 'md5', encoding: 'base32' }))).toEqual([
      'invalid-value algorithm',
      'invalid-value encoding',
    ]);
    for (const header of ['X Sig', 'X-Sig:', '', 'Ünïcode'])
      expect(brief(problems({ scheme: 'token', secret: 's', header }))).toEqual(['invalid-value header']);
  });

  it('refuses a secret of only whitespace (a variable set to a blank line), for every scheme with a secret', () => {
    for (const scheme of SECRET_SCHEMES) {
      for (const secret of [' ', '\t \n', '\u00a0']) {
        const header = scheme === 'hmac' || scheme === 'token' ? 'X-Sig' : undefined;
        expect(brief(problems({ scheme, secret, header }))).toEqual(['invalid-signature-secret secret']);
      }
    }
  });

  it('refuses an empty secret, and a standard secret that is not base64, without quoting it', () => {
    for (const scheme of SECRET_SCHEMES) {
      const header = scheme === 'hmac' || scheme === 'token' ? 'X-Sig' : undefined;
      expect(brief(problems({ scheme, secret: '', header })), scheme).toEqual(['invalid-signature-secret secret']);
    }
    for (const secret of ['whsec_not base64!', 'whsec_', 'whsec_%%%%']) {
      const [problem] = problems({ scheme: 'standard', secret });
      expect(problem).toMatchObject({ code: 'invalid-signature-secret', attribute: 'secret' });
      if (secret !== 'whsec_') expect(problem!.message).not.toContain(secret.slice('whsec_'.length));
    }
    // Without the prefix the secret is read as base64 all the same, as the standardwebhooks library does.
    expect(describeSignature({ scheme: 'standard', secret: Buffer.from('key').toString('base64') }, closest).ok).toBe(true);
  });

  it('reports every problem of one element at once', () => {
    expect(brief(problems({ scheme: 'hmac', secret: '', algorithm: 'md5', tolerance: '5m' }))).toEqual([
      'attribute-not-for-scheme tolerance',
      'missing-attribute header',
      'invalid-value algorithm',
      'invalid-signature-secret secret',
    ]);
  });
});
