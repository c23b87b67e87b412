// dry-run names each endpoint's <signature> schemes (with the headers serve reads them from) and
// its <handshake>, in every format, and a simulated request says that serve verifies the
// signature first while dry-run checks none.
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dryRun } from './run.js';

const APP = fileURLToPath(new URL('../../fixtures/serve/signatures/endpoints.xml', import.meta.url));
const ENV = {
  PEER: 'http://127.0.0.1:9',
  GITHUB_SECRET: 'gh-secret-value',
  GITHUB_SECRET_NEW: 'gh-secret-new-value',
  STRIPE_SECRET: 'whsec_stripe-secret-value',
  SLACK_SECRET: 'slack-secret-value',
  SHOPIFY_SECRET: 'shopify-secret-value',
  STANDARD_SECRET: 'whsec_c3RhbmRhcmQtc2VjcmV0LXZhbHVl',
  HMAC_SECRET: 'hmac-secret-value',
  GITLAB_TOKEN: 'gitlab-token-value',
  ZOOM_SECRET: 'zoom-secret-value',
  META_SECRET: 'meta-secret-value',
  META_VERIFY_TOKEN: 'meta-verify-token-value',
};

interface WebhookJson {
  signatures: { scheme: string; headers: string[]; checks: string; tolerance: string | null }[];
  handshake: string | null;
  checks: { check: string; outcome: string; detail: string }[] | null;
}
type Doc = { endpoints: { name: string; webhook?: WebhookJson }[] };

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dry-run-signatures-'));
  writeFileSync(join(dir, 'event.json'), JSON.stringify({ action: 'opened', type: 'x' }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('dry-run and webhook checks', () => {
  it('lists the schemes with their headers and the handshake, folders included, and nothing for an endpoint without', async () => {
    const run = await dryRun([APP, '--format', 'json'], ENV);
    expect(run.exitCode).toBe(0);
    const doc = JSON.parse(run.stdout) as Doc;
    const of = (name: string) => doc.endpoints.find((e) => e.name === name)!;
    expect(of('github').webhook).toEqual({
      signatures: [
        { scheme: 'github', headers: ['X-Hub-Signature-256'], checks: 'HMAC-SHA256 (hex) of {body}', tolerance: null },
        { scheme: 'github', headers: ['X-Hub-Signature-256'], checks: 'HMAC-SHA256 (hex) of {body}', tolerance: null },
      ],
      handshake: null,
      checks: null,
    });
    expect(of('slack').webhook).toEqual({
      signatures: [
        { scheme: 'slack', headers: ['X-Slack-Signature', 'X-Slack-Request-Timestamp'], checks: 'HMAC-SHA256 (hex) of v0:{timestamp}:{body}', tolerance: '2m' },
      ],
      handshake: 'slack',
      checks: null,
    });
    expect(of('stripe').webhook?.signatures).toEqual([
      { scheme: 'stripe', headers: ['Stripe-Signature'], checks: 'HMAC-SHA256 (hex) of {timestamp}.{body}', tolerance: '5m' },
    ]);
    expect(of('gitlab').webhook?.signatures).toEqual([
      { scheme: 'token', headers: ['X-Gitlab-Token'], checks: 'the header equals the token', tolerance: null },
    ]);
    expect(of('graph').webhook).toEqual({ signatures: [], handshake: 'graph', checks: null });
    expect(of('inherits').webhook?.signatures.map((s) => s.scheme)).toEqual(['github']);
    expect(of('forwards').webhook).toBeUndefined();
    for (const secret of Object.values(ENV)) if (secret.length > 12) expect(run.stdout).not.toContain(secret);
  });

  it('shows them in text and graph labels', async () => {
    const text = await dryRun([APP, '--endpoint', 'meta'], ENV);
    expect(text.stdout).toContain('webhook   signature github (X-Hub-Signature-256); handshake meta');
    for (const format of ['mermaid', 'dot']) {
      const graph = await dryRun([APP, '--endpoint', 'standard', '--format', format], ENV);
      expect(graph.stdout).toContain('after signature standard (webhook-signature, webhook-timestamp, webhook-id; tolerance 5m)');
    }
  });

  it('says, for a simulated delivery, that serve verifies the signature first and dry-run checks none', async () => {
    const run = await dryRun([APP, '--endpoint', 'slack', '--body', join(dir, 'event.json'), '--header', 'X-Slack-Signature: v0=00'], ENV);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(
      /\[not-checked\] signature: serve verifies slack \(HMAC-SHA256 \(hex\) of v0:\{timestamp\}:\{body\}\) over the raw body before anything else \(401 when it fails\); dry-run checks no signature\n\s+\[not-checked\] handshake:/,
    );
    const json = await dryRun([APP, '--endpoint', 'meta', '--param', 'object=page', '--format', 'json'], ENV);
    const webhook = (JSON.parse(json.stdout) as Doc).endpoints[0]!.webhook!;
    // Meta's handshake is unsigned: serve answers it before checking signatures.
    expect(webhook.checks?.map((c) => [c.check, c.outcome])).toEqual([
      ['handshake', 'not-checked'],
      ['signature', 'not-checked'],
    ]);
  });

  it("answers a simulated verification request as serve would: the handshake's answer, nothing bound, no task run", async () => {
    writeFileSync(join(dir, 'verification.json'), JSON.stringify({ token: 'x', challenge: 'c-123', type: 'url_verification' }));
    const slack = await dryRun([APP, '--endpoint', 'slack', '--body', join(dir, 'verification.json')], ENV);
    expect(slack.exitCode).toBe(0);
    expect(slack.stdout).toContain("[answered] handshake: this is Slack's verification request: serve answers it itself, 200 text/plain; charset=utf-8");
    expect(slack.stdout).toContain("response  200 the Slack handshake's answer, written by serve (text/plain; charset=utf-8)");
    expect(slack.stdout).toContain('serve answers the handshake itself, so no task runs');
    expect(slack.stdout).not.toMatch(/^ {2}bound /m);

    const graph = await dryRun([APP, '--endpoint', 'graph', '--param', 'validationToken=hello', '--format', 'json'], ENV);
    expect(graph.exitCode).toBe(0);
    expect(graph.stderr).toBe('');
    const doc = JSON.parse(graph.stdout) as Doc & { endpoints: { response: { status: number }; tasks: { willRun: boolean }[] }[] };
    expect(doc.endpoints[0]!.webhook!.checks).toEqual([expect.objectContaining({ check: 'handshake', outcome: 'answered' })]);
    expect(doc.endpoints[0]!.response.status).toBe(200);
    expect(doc.endpoints[0]!.tasks.map((t) => t.willRun)).toEqual([false]);
  });

  it('refuses a verification request with the wrong verify token as serve would: 403, exit 1', async () => {
    const run = await dryRun(
      [APP, '--endpoint', 'meta', '--param', 'hub.mode=subscribe', '--param', 'hub.verify_token=wrong', '--param', 'hub.challenge=5'],
      ENV,
    );
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain('[refused] handshake: serve answers 403');
    expect(run.stdout).toContain('response  403');
    expect(run.stdout + run.stderr).not.toContain(ENV.META_VERIFY_TOKEN);
  });
});
