// dry-run shows an endpoint's protections in every format and, simulating a request, which
// check serve would make and what it decides without I/O; a verifier is never called.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dryRun } from './run.js';

const PROTECT = fileURLToPath(new URL('../../fixtures/serve/protect/endpoints.xml', import.meta.url));
const CAPTCHA = fileURLToPath(new URL('../../fixtures/serve/captcha/endpoints.xml', import.meta.url));

/** A verifier that counts what reaches it: dry-run must never call it. */
let verifier: http.Server;
let calls = 0;
let env: Record<string, string>;
beforeAll(async () => {
  verifier = http.createServer((_request, response) => {
    calls++;
    response.end('{"success":true}');
  });
  await new Promise<void>((resolve) => verifier.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}`;
  env = { PEER: origin, VERIFIER: origin, TURNSTILE_SECRET: 's1', HCAPTCHA_SECRET: 's2', RECAPTCHA_SECRET: 's3', ALTCHA_KEY: 's4' };
});
afterAll(() => new Promise<void>((resolve) => verifier.close(() => resolve())));

interface ProtectionsJson {
  honeypot: string | null;
  captcha: { provider: string; parameter: string; minScore: number | null; verifyUrl: string | null } | null;
  rateLimits: { requests: number; per: string; by: string; burst: number }[];
  checks: { check: string; outcome: string; detail: string }[] | null;
}
type Doc = {
  endpoints: { name: string; response: { status: number | null }; tasks: { id: string; willRun: boolean | null }[]; protections?: ProtectionsJson }[];
};

describe('dry-run and protections', () => {
  it("lists each endpoint's protections, folders' included, and none for an endpoint without", async () => {
    const run = await dryRun([PROTECT, '--format', 'json'], env);
    expect(run.exitCode).toBe(0);
    const doc = JSON.parse(run.stdout) as Doc;
    const of = (name: string) => doc.endpoints.find((e) => e.name === name)!;
    expect(of('whoami').protections).toBeUndefined();
    expect(of('contact').protections).toEqual({ honeypot: 'website', captcha: null, rateLimits: [], checks: null });
    expect(of('signup').protections).toEqual({
      honeypot: 'homepage',
      captcha: null,
      rateLimits: [{ requests: 50, per: '1m', by: 'client-ip', burst: 0 }],
      checks: null,
    });
    expect(of('per-email').protections?.rateLimits).toEqual([{ requests: 2, per: '1m', by: 'parameter:email', burst: 0 }]);

    const text = await dryRun([PROTECT, '--endpoint', 'signup'], env);
    expect(text.stdout).toContain('protects  honeypot "homepage"; rate limit 50 per 1m by client-ip');
    for (const format of ['mermaid', 'dot']) {
      const graph = await dryRun([PROTECT, '--endpoint', 'limited', '--format', format], env);
      expect(graph.stdout).toContain('after rate limit 3 per 1m by client-ip');
    }
  });

  it('a filled honeypot: the success is shown and no task runs; an empty one changes nothing', async () => {
    const caught = JSON.parse(
      (
        await dryRun(
          [PROTECT, '--endpoint', 'contact', '--param', 'name=Bot', '--param', 'email=bot@example.test', '--param', 'website=x', '--format', 'json'],
          env,
        )
      ).stdout,
    ) as Doc;
    const contact = caught.endpoints[0]!;
    expect(contact.response.status).toBe(200);
    expect(contact.tasks.map((t) => t.willRun)).toEqual([false, false]);
    expect(contact.protections?.checks?.map((c) => [c.check, c.outcome])).toEqual([['honeypot', 'caught']]);

    const person = await dryRun(
      [PROTECT, '--endpoint', 'contact', '--param', 'name=Ada', '--param', 'email=ada@example.test', '--param', 'website=', '--format', 'json'],
      env,
    );
    // The trap field is read, not ignored: no warning about an undeclared parameter.
    expect(person.stderr).not.toContain('website');
    const doc = JSON.parse(person.stdout) as Doc;
    expect(doc.endpoints[0]!.tasks.map((t) => t.willRun)).toEqual([true, true]);
    expect(doc.endpoints[0]!.protections?.checks?.map((c) => [c.check, c.outcome])).toEqual([['honeypot', 'passes']]);

    // A space is filled, as serve takes it.
    const spaced = JSON.parse(
      (
        await dryRun(
          [PROTECT, '--endpoint', 'contact', '--param', 'name=Bot', '--param', 'email=bot@example.test', '--param', 'website= ', '--format', 'json'],
          env,
        )
      ).stdout,
    ) as Doc;
    expect(spaced.endpoints[0]!.protections?.checks?.map((c) => [c.check, c.outcome])).toEqual([['honeypot', 'caught']]);
  });

  it('a CAPTCHA: a missing token is the 403 serve gives; a present one is not verified, and the verifier is never called', async () => {
    const missing = await dryRun([CAPTCHA, '--endpoint', 'recaptcha', '--param', 'name=Ada', '--format', 'json'], env);
    expect(missing.exitCode).toBe(1);
    const refused = (JSON.parse(missing.stdout) as Doc).endpoints[0]!;
    expect(refused.response.status).toBe(403);
    expect(refused.tasks[0]!.willRun).toBe(false);

    const given = await dryRun([CAPTCHA, '--endpoint', 'recaptcha', '--param', 'name=Ada', '--param', 'g-recaptcha-response=tok'], env);
    expect(given.exitCode).toBe(0);
    expect(given.stdout).toContain(
      '[not-checked] captcha: the recaptcha token would be sent to ${env:VERIFIER}/recaptcha/api/siteverify; dry-run verifies nothing',
    );
    expect(given.stdout).toContain('[runs] crm');
    expect(calls).toBe(0);
  });

  it('a rate limit by parameter names the key it would count', async () => {
    const run = await dryRun([PROTECT, '--endpoint', 'per-email', '--param', 'email=ada@example.test'], env);
    expect(run.stdout).toContain('[not-checked] rate-limit: counts against 2 per 1m for email "ada@example.test"; dry-run keeps no count');
  });
});
