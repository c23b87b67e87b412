// --param: a simulated request per endpoint, bound and checked exactly as serve would.
import { describe, expect, it } from 'vitest';
import { dryRun, dryRunJson, SHOP, SECRETS } from './run.js';

const signupOf = (doc: Awaited<ReturnType<typeof dryRunJson>>['doc']) => doc.endpoints.find((e) => e.name === 'signup')!;
const taskOf = (doc: Awaited<ReturnType<typeof dryRunJson>>['doc'], id: string) => signupOf(doc).tasks.find((t) => t.id === id)!;

describe('a simulated request', () => {
  it('decides conditions, expands requests and masks secrets', async () => {
    const { run, doc } = await dryRunJson([SHOP, '--endpoint', 'signup', '--param', 'email=ann@example.com', '--param', 'newsletter=yes']);
    expect(run.exitCode).toBe(0);
    expect(signupOf(doc).response).toEqual({ kind: 'redirect', status: 302 });
    expect(taskOf(doc, 'fetch-id')).toMatchObject({
      willRun: true,
      request: { method: 'GET', url: 'https://crm.example/lookup?email=ann%40example.com', headers: { 'x-api-key': '***' }, body: null },
    });
    expect(taskOf(doc, 'create-customer')).toMatchObject({
      willRun: true,
      request: {
        method: 'POST',
        url: 'https://crm.example/customers/<from fetch-id>/subscriptions',
        headers: { authorization: '***', 'content-type': 'application/json' },
        body: '{"email":"ann@example.com","name":"friend"}',
      },
    });
    expect(taskOf(doc, 'notify').emails).toEqual([
      { from: 'shop@example.com', to: ['ann@example.com'], subject: 'Welcome, friend', attachments: ['terms.txt', 'newsletter.txt'] },
      { from: 'shop@example.com', to: ['sales@example.com'], subject: 'Welcome, friend', attachments: ['terms.txt', 'newsletter.txt'] },
    ]);
    expect(taskOf(doc, 'notify')).not.toHaveProperty('request');
  });

  it('never prints a secret, in any format', async () => {
    const basic = Buffer.from(`api:${SECRETS.CRM_PASSWORD}`).toString('base64');
    for (const format of ['text', 'json', 'mermaid', 'dot']) {
      const run = await dryRun([SHOP, '--format', format, '--param', 'email=ann@example.com', '--param', 'newsletter=yes'], { ...SECRETS });
      for (const secret of [SECRETS.CRM_KEY, SECRETS.CRM_PASSWORD, basic]) {
        expect(run.stdout).not.toContain(secret);
        expect(run.stderr).not.toContain(secret);
      }
    }
  });

  it('skips a task whose condition is false and gives no request for it', async () => {
    const { doc } = await dryRunJson([SHOP, '--endpoint', 'signup', '--param', 'email=ann@example.com', '--param', 'newsletter=no']);
    const task = taskOf(doc, 'create-customer');
    expect(task.willRun).toBe(false);
    expect(task).not.toHaveProperty('request');
    expect(taskOf(doc, 'notify').emails![0]!.attachments).toEqual(['terms.txt']);
    expect(signupOf(doc).response).toEqual({ kind: 'body', status: 201 });
  });

  it('leaves willRun null when the condition uses an intermediate value, and still shows the request', async () => {
    const { doc } = await dryRunJson([SHOP, '--endpoint', 'signup', '--param', 'email=ann@example.com']);
    const audit = taskOf(doc, 'audit');
    expect(audit.willRun).toBeNull();
    expect(audit.request).toEqual({
      method: 'POST',
      url: 'https://audit.example/events',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': 'cc37f2346a2915b8a6337c31668efafd' },
      body: 'customer=<from fetch-id>&event=signup',
    });
  });

  it('joins a parameter given several times with the separator', async () => {
    const { doc } = await dryRunJson([SHOP, '--endpoint', 'signup', '--param', 'email=ann@example.com', '--param', 'name=Ann', '--param', 'name=Bob']);
    expect(taskOf(doc, 'notify').emails![0]!.subject).toBe('Welcome, Ann||Bob');
  });

  it('prints the exact request, emails and chosen response in text', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'signup', '--param', 'email=ann@example.com', '--param', 'newsletter=yes', '--param', 'name=<Ann>'], {
      ...SECRETS,
    });
    expect(run.exitCode).toBe(0);
    const out = run.stdout;
    expect(out).toContain('Simulated request: email=ann@example.com, newsletter=yes, name=<Ann>');
    expect(out).toContain(
      '(whitelist: https://shop.example)  ← chosen\n            → https://shop.example/welcome?email=ann%40example.com\n            otherwise: 201',
    );
    expect(out).toMatch(
      /\[runs\] create-customer[^\n]*\n(?: {6}[^\n]*\n)*? {6}POST https:\/\/crm\.example\/customers\/<from fetch-id>\/subscriptions\n {6}authorization: \*\*\*\n {6}content-type: application\/json\n {6}idempotency-key: [0-9a-f]{32}\n\n {6}\{"email":"ann@example\.com","name":"<Ann>"\}/,
    );
    expect(out).toContain(
      '        To: sales@example.com\n        Subject: Welcome, <Ann>\n        X-Mailer: endpoint-service\n        Attachments: terms.txt, newsletter.txt\n        Inline images: logo.png (cid:logo.png)',
    );
    expect(out).toContain('        -- text/html\n        <p>Hello <b>&lt;Ann&gt;</b></p><img src="cid:logo.png">');
    expect(out).toContain('        -- text/plain\n        Hello <Ann>, thanks for signing up.');
    expect(out).toMatch(/\[maybe\] audit/);
  });
});

describe('a simulated request that fails its primary action', () => {
  it("reports a missing required parameter with serve's detail and exits 1", async () => {
    const { run, doc } = await dryRunJson([SHOP, '--endpoint', 'signup', '--param', 'newsletter=yes']);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('missing required parameter "email"');
    expect(signupOf(doc).response).toEqual({ kind: 'empty', status: 400 });
    for (const task of signupOf(doc).tasks) {
      expect(task.willRun).toBe(false);
      expect(task).not.toHaveProperty('request');
      expect(task).not.toHaveProperty('emails');
    }
  });

  it('reports a bad environment', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'signup', '--param', 'email=a@example.com', '--param', 'environment=staging']);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('parameter "environment" must be "live" or "preview"');
    expect(run.stdout).toContain('request fails: parameter "environment" must be "live" or "preview"');
  });

  it('accepts environment=preview and shows it', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'download', '--param', 'file=terms.txt', '--param', 'environment=preview']);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('environment preview');
  });

  it('reports a redirect outside the whitelist', async () => {
    const refused = await dryRun([SHOP, '--endpoint', 'go', '--param', 'target=https://good.example.evil.com/x']);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain('the redirect target is not in the whitelist');
    const allowed = await dryRunJson([SHOP, '--endpoint', 'go', '--param', 'target=https://good.example/x']);
    expect(allowed.run.exitCode).toBe(0);
    expect(allowed.doc.endpoints[0]!.response).toEqual({ kind: 'redirect', status: 302 });
  });

  it('reports an invalid download filename', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'download', '--param', 'file=../etc/passwd']);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('the download filename "../etc/passwd" may only contain');
  });

  it('follows a forward and reports a failure of its target', async () => {
    const failing = await dryRunJson([SHOP, '--endpoint', 'forwarder', '--param', 'newsletter=no']);
    expect(failing.run.exitCode).toBe(1);
    expect(failing.run.stderr).toContain('forwarded endpoint "download"');
    expect(failing.run.stderr).toContain('missing required parameter "file"');
    expect(failing.doc.endpoints[0]!.response).toEqual({ kind: 'empty', status: 400 });
  });
});

describe('a task that would fail', () => {
  // As serve: the tasks are prepared before the first side effect, so the request is refused
  // with 400 naming the parameter, and no request or email is printed as sent.
  it('refuses a line break in a subject as serve does: 400 naming the parameter, nothing printed as sent, exit 1', async () => {
    const run = await dryRun([SHOP, '--endpoint', 'signup', '--param', 'email=ann@example.com', '--param', 'name=Ann\r\nBcc: x@evil.example']);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('endpoint "signup": the request fails with status 400: parameter "name" contains a line break');
    expect(run.stdout).toContain('request fails');
    expect(run.stdout).not.toMatch(/\[runs\]|GET https|POST https|Subject:/);
    expect(run.stdout).toContain('name="Ann\\r\\nBcc: x@evil.example"');
  });
});
