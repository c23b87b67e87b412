// The README's example in a real browser: fixtures/contact-form serves its own form page
// (GET /form), a headless Chromium fills it in and sends it, and sees the thank-you page, while
// the CRM and the SMTP server (local peers) get the contact and the mail; a form sent with a
// field left blank shows the service's error page, whose "Back to the form" link returns to the
// form. Debian's chromium at /usr/bin/chromium; without it the file is skipped with one line, but
// under CI=true it fails (CI installs it). A screenshot of each page is written to
// test-artifacts/ (ignored by git).
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../helpers/browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { ROOT, StartedServices, type RunningService } from '../helpers/serve.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';

const present = !chromiumMissing('the contact form in a browser');
const ARTIFACTS = path.join(ROOT, 'test-artifacts');

describe.skipIf(!present)('the contact-form example in Chromium', () => {
  const services = new StartedServices();
  let crm: HttpPeer;
  let smtp: SmtpPeer;
  let dir: string;
  let chromiumProcess: Browser;
  let service: RunningService;
  let browser: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    crm = await HttpPeer.start();
    crm.route('/crm/contacts', { status: 201, headers: { 'content-type': 'application/json' }, body: '{"id": 1000}' });
    crm.route('/crm/contacts/1000/notes', { status: 201, body: '' });
    crm.route('/newsletter/subscribers', { status: 201, body: '' });
    smtp = await SmtpPeer.start();
    // The example as it is, but for the address of its CRM.
    dir = mkdtempSync(path.join(tmpdir(), 'es-browser-form-'));
    cpSync(path.join(ROOT, 'fixtures/contact-form'), dir, { recursive: true });
    const file = path.join(dir, 'endpoints.xml');
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll('http://127.0.0.1:4000', crm.origin));
    service = await services.start(file, ['--smtp-url', `smtp://127.0.0.1:${smtp.port}`], { CRM_API_KEY: 'secret' });
    // A fresh profile each run, made and removed by playwright.
    chromiumProcess = await launchChromium();
    browser = await chromiumProcess.newContext();
    page = await browser.newPage();
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await chromiumProcess?.close();
    await services.stopAll();
    await crm?.close();
    await smtp?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('loads the form from the example, sends it with an attachment and shows the thank-you page', async () => {
    const loaded = await page.goto(`${service.url}/form`);
    expect(loaded?.status()).toBe(200);
    expect(await page.title()).toBe('Contact us');
    await page.fill('#name', 'Ann');
    await page.fill('#email', 'ann@example.com');
    await page.fill('#message', 'Hello from a browser');
    await page.setInputFiles('#cv', { name: 'cv.txt', mimeType: 'text/plain', buffer: Buffer.from('my CV') });
    await page.check('input[name=newsletter]');
    await page.screenshot({ path: path.join(ARTIFACTS, 'contact-form-filled.png'), fullPage: true });
    await Promise.all([page.waitForURL(/\/thank-you\?name=Ann$/), page.click('button[type=submit]')]);
    expect(await page.textContent('h1')).toBe('Thank you!');
    await page.screenshot({ path: path.join(ARTIFACTS, 'contact-form-thanks.png'), fullPage: true });

    await smtp.waitForMessages(1);
    const mail = smtp.messages[0]!.parsed;
    expect(mail.subject).toBe('Contact from Ann');
    expect(mail.attachments.map((a) => a.filename)).toEqual(expect.arrayContaining(['cv.txt', 'privacy-notice.txt']));
    expect(JSON.parse(crm.requestsTo('/crm/contacts')[0]!.body)).toEqual({ name: 'Ann', email: 'ann@example.com', source: 'contact-form' });
    expect(JSON.parse(crm.requestsTo('/crm/contacts/1000/notes')[0]!.body)).toMatchObject({ text: 'Hello from a browser' });
    expect(crm.requestsTo('/newsletter/subscribers')).toHaveLength(1);
  });

  it('a field left blank shows the error page naming it, and "Back to the form" returns to the form', async () => {
    const sent = { mail: smtp.messages.length, crm: crm.requests.length };
    await page.goto(`${service.url}/form`);
    await page.fill('#email', 'ann@example.com');
    await page.fill('#message', 'No name given');
    const [answer] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/contact')), page.click('button[type=submit]')]);
    expect(answer.status()).toBe(400);
    await page.waitForLoadState();
    expect(await page.textContent('h1')).toBe('Please check the form');
    expect(await page.textContent('ul')).toBe('Please fill in “name”.');
    await page.screenshot({ path: path.join(ARTIFACTS, 'contact-form-error.png'), fullPage: true });

    await Promise.all([page.waitForURL(`${service.url}/form`), page.click('text=Back to the form')]);
    expect(await page.title()).toBe('Contact us');
    expect(await page.isVisible('#name')).toBe(true);
    expect({ mail: smtp.messages.length, crm: crm.requests.length }).toEqual(sent);
  });
});
