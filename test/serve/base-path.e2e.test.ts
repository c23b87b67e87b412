// `serve --base-path`, through the binary: the README's example (fixtures/contact-form, its CRM
// and SMTP server replaced by local peers) works below a base path (and without one, as the
// README's walkthrough shows), its redirect included, and
// the full base URL is said at start. The ready line on stdout keeps its fixed form
// (`endpoint-service listening on http://HOST:PORT`, read by scripts), so the base URL is a log line.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { ROOT, StartedServices, type RunningService } from '../helpers/serve.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';

const services = new StartedServices();
let crm: HttpPeer;
let smtp: SmtpPeer;
let dir: string;
let service: RunningService;

beforeAll(async () => {
  crm = await HttpPeer.start();
  crm.route('/crm/contacts', { status: 201, headers: { 'content-type': 'application/json' }, body: '{"id": 1000}' });
  crm.route('/crm/contacts/1000/notes', { status: 201, body: '' });
  smtp = await SmtpPeer.start();
  // The example as it is, but for the address of its CRM.
  dir = mkdtempSync(path.join(tmpdir(), 'es-base-path-'));
  cpSync(path.join(ROOT, 'fixtures/contact-form'), dir, { recursive: true });
  const file = path.join(dir, 'endpoints.xml');
  writeFileSync(file, readFileSync(file, 'utf8').replaceAll('http://127.0.0.1:4000', crm.origin));
  service = await services.start(file, ['--base-path', '/forms', '--smtp-url', `smtp://127.0.0.1:${smtp.port}`], { CRM_API_KEY: 'secret' });
});
afterAll(async () => {
  await services.stopAll();
  await crm?.close();
  await smtp?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('--base-path /forms', () => {
  it("the example's form post redirects to its thank-you page below the base path, which answers", async () => {
    const form = new FormData();
    form.set('name', 'Ann');
    form.set('email', 'ann@example.com');
    form.set('message', 'Hello');
    const posted = await fetch(`${service.url}/forms/contact`, { method: 'POST', body: form, redirect: 'manual' });
    expect(posted.status).toBe(302);
    // Resolved as a browser resolves a Location: against the URL that was posted to.
    const target = new URL(posted.headers.get('location')!, `${service.url}/forms/contact`);
    expect(target.pathname).toBe('/forms/thank-you');
    expect(target.searchParams.get('name')).toBe('Ann');
    const page = await fetch(target);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(smtp.messages.length).toBe(1);
  });

  it('the same redirect works without a base path', async () => {
    const plain = await services.start(path.join(dir, 'endpoints.xml'), ['--smtp-url', `smtp://127.0.0.1:${smtp.port}`], { CRM_API_KEY: 'secret' });
    const posted = await fetch(`${plain.url}/contact`, { method: 'POST', body: new URLSearchParams({ name: 'Ann', email: 'ann@example.com', message: 'Hi' }), redirect: 'manual' });
    expect(posted.status).toBe(302);
    const target = new URL(posted.headers.get('location')!, `${plain.url}/contact`);
    expect(target.pathname).toBe('/thank-you');
    expect((await fetch(target)).status).toBe(200);
    // The README's walkthrough says what a bare GET of the form answers.
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const promised = /curl -i http:\/\/127\.0\.0\.1:8080\/contact +# 400 problem\+json: (.+)/.exec(readme)![1]!;
    const bare = await fetch(`${plain.url}/contact`);
    expect(bare.status).toBe(400);
    expect(((await bare.json()) as { detail: string }).detail).toBe(promised);
  });

  it('says the full base URL at start in the log; the ready line keeps its form', async () => {
    expect(service.stdout()).toMatch(/^endpoint-service listening on http:\/\/127\.0\.0\.1:\d+\n$/);
    const line = await service.waitForLog((l) => typeof l.url === 'string' && String(l.msg).includes('base path'));
    expect(line.url).toBe(`${service.url}/forms/`);
  });

  it('says it with --workers 2 too (the primary prints the ready line there)', async () => {
    const workers = await services.start(path.join(dir, 'endpoints.xml'), ['--workers', '2', '--base-path', '/a/b/', '--smtp-url', `smtp://127.0.0.1:${smtp.port}`], { CRM_API_KEY: 'secret' });
    const line = await workers.waitForLog((l) => typeof l.url === 'string' && String(l.msg).includes('base path'));
    expect(line.url).toBe(`${workers.url}/a/b/`);
  });
});
