// The deliveries page in a real Chromium (docs/deliveries.md, "The page"): logged in with the
// URL serve prints, it lists what was just posted and what arrives while it is open, filters,
// opens a delivery, reveals its request with credentials masked, and replays it; without the
// token nothing is shown, an action from another origin is refused, and no request of the page
// leaves its origin.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';
import { artifact, chromiumMissing, launchChromium } from '../helpers/browser.js';
import { QUEUE_KEY, uniqueQueueName } from '../helpers/queue.js';
import { deleteKeys, testRedisUrl } from '../helpers/redis.js';

const SKIP = chromiumMissing();
const SECRET = 'Bearer token-that-must-stay-masked-91c2';

describe.skipIf(SKIP)('the deliveries page', () => {
  let peer: HttpPeer;
  let service: RunningService;
  let stateDir: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let loginUrl: string;
  let adminOrigin: string;
  /** Every URL the browser asked for. */
  const requested: string[] = [];

  async function post(fields: Record<string, string>, headers: Record<string, string> = {}): Promise<string> {
    const response = await fetch(`${service.url}/contact`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    });
    return response.headers.get('x-request-id')!;
  }

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/crm', { status: 200, body: 'ok' });
    stateDir = mkdtempSync(path.join(tmpdir(), 'es-page-'));
    service = await startServe(fixture('deliveries'), ['--state-dir', stateDir], { PEER: peer.origin, ENDPOINT_SERVICE_ADMIN_TOKEN: undefined });
    const line = await service.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('the deliveries page:'));
    loginUrl = line.url as string;
    adminOrigin = new URL(loginUrl).origin;
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('request', (r) => requested.push(r.url()));
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await peer?.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('is not on the public port, and answers 401 without the token, showing no delivery', async () => {
    const id = await post({ name: 'Ada', message: 'first' });
    expect(new URL(loginUrl).port).not.toBe(new URL(service.url).port);
    expect((await fetch(`${service.url}/`)).status).toBe(404);
    const anonymous = await browser.newPage();
    const response = await anonymous.goto(adminOrigin + '/');
    expect(response!.status()).toBe(401);
    expect(await anonymous.content()).not.toContain(id);
    expect((await fetch(`${adminOrigin}/deliveries/${id}`)).status).toBe(401);
    expect((await fetch(`${adminOrigin}/?token=wrong`)).status).toBe(401);
    await anonymous.close();
  });

  it('logs in with the URL: a cookie, the token gone from the address, the delivery just posted listed', async () => {
    const id = await post({ name: 'Grace', message: 'hello' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const response = await page.goto(loginUrl);
    expect(response!.status()).toBe(200);
    expect(page.url()).toBe(adminOrigin + '/');
    const cookie = (await context.cookies()).find((c) => c.name === 'endpoint_service_admin')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(response!.headers()['content-security-policy']).toContain("default-src 'none'");
    await expect(page.locator(`#d-${id}`)).toBeDefined();
    expect(await page.locator(`#d-${id} .verdict`).textContent()).toBe('accepted');
    await page.screenshot({ path: artifact('deliveries-list-1280.png'), fullPage: true });
  });

  it('shows a delivery that arrives while it is open (server-sent events)', async () => {
    await page.locator('#live:not([hidden])').waitFor({ timeout: 10_000 });
    const id = await post({ name: 'Live', message: 'while you watch' });
    await page.locator(`#d-${id}`).waitFor({ timeout: 10_000 });
    expect(await page.locator('#rows tr').first().getAttribute('id')).toBe(`d-${id}`);
  });

  it('filters by verdict', async () => {
    await post({ name: 'Bot', message: 'buy', website: 'http://spam.example' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await page.goto(adminOrigin + '/');
    await page.selectOption('#f-verdict', 'spam');
    await page.click('.filters button[type=submit]');
    await page.waitForURL(/verdict=spam/);
    const verdicts = await page.locator('#rows .verdict').allTextContents();
    expect(verdicts.length).toBeGreaterThan(0);
    expect(new Set(verdicts)).toEqual(new Set(['spam']));
  });

  it('opens a delivery, reveals its request with credentials masked, and replays it', async () => {
    const before = peer.requestsTo('/crm').length;
    const id = await post({ name: 'Lin', message: 'reveal me' }, { authorization: SECRET });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await page.goto(adminOrigin + '/');
    await page.click(`#d-${id} a`);
    await page.waitForURL(`${adminOrigin}/deliveries/${id}`);
    expect(await page.locator('.timeline').textContent()).toContain('crm');
    await page.click('button:has-text("Reveal headers and body")');
    await page.locator('pre.body').waitFor();
    expect(await page.locator('pre.body').textContent()).toContain('message=reveal+me');
    const content = await page.content();
    expect(content).not.toContain('token-that-must-stay-masked');
    expect(await page.locator('.headers tr', { hasText: /authorization/i }).textContent()).toContain('masked');
    await page.screenshot({ path: artifact('delivery-detail-1280.png'), fullPage: true });

    await page.click('button:has-text("Replay")');
    await page.waitForURL(/notice=replayed/, { timeout: 30_000 });
    expect(await page.locator('.notice').textContent()).toContain('Replayed');
    expect(await page.locator('.facts').textContent()).toContain(id);
    expect(peer.requestsTo('/crm').length).toBe(before + 2);
  });

  it('refuses an action posted from another origin', async () => {
    const id = await post({ name: 'Target', message: 'x' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = peer.requestsTo('/crm').length;
    // A page on another origin (another port is another origin, though the same site) that posts the replay form.
    peer.route('/evil', {
      status: 200,
      headers: { 'content-type': 'text/html' },
      body: `<form method="post" action="${adminOrigin}/deliveries/${id}/replay"><input name="csrf" value="guessed"><button>go</button></form>`,
    });
    const evil = await context.newPage();
    await evil.goto(peer.url('/evil'));
    const [response] = await Promise.all([evil.waitForResponse((r) => r.url().includes('/replay')), evil.click('button')]);
    expect(response.status()).toBe(403);
    // The refusal page loaded in full before the close: Chromium can acknowledge a close that races
    // a cross-origin navigation's commit and never close (microsoft/playwright#41900).
    await evil.waitForURL(/\/replay$/, { waitUntil: 'load' });
    await evil.close();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(peer.requestsTo('/crm').length).toBe(before);
  });

  it('reads at 360 px, and no request of the page left its origin', async () => {
    const narrow = await browser.newContext({ viewport: { width: 360, height: 780 } });
    await narrow.addCookies((await context.cookies()).filter((c) => c.name === 'endpoint_service_admin'));
    const small = await narrow.newPage();
    small.on('request', (r) => requested.push(r.url()));
    await small.goto(adminOrigin + '/');
    const width = await small.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(360);
    await small.screenshot({ path: artifact('deliveries-list-360.png'), fullPage: true });
    await small.click('#rows tr a');
    await small.waitForURL(/\/deliveries\/[^/]+$/, { waitUntil: 'load' });
    await small.screenshot({ path: artifact('delivery-detail-360.png'), fullPage: true });
    await narrow.close();
    const fromPage = requested.filter((u) => !u.startsWith(peer.origin));
    expect(fromPage.length).toBeGreaterThan(5);
    expect(fromPage.filter((u) => !u.startsWith(adminOrigin))).toEqual([]);
  });
});

const REDIS_URL = SKIP ? null : await testRedisUrl();

describe.skipIf(SKIP || REDIS_URL === null)('the deliveries page of serve --queue', () => {
  it('retries the failed task of a queued job', async () => {
    const peer = await HttpPeer.start();
    // The queued run's task fails (retries="0": the job fails at once), then works.
    peer.route('/slow', { status: 500, body: 'down' }, { status: 200, body: 'ok' });
    const stateDir = mkdtempSync(path.join(tmpdir(), 'es-page-'));
    const name = uniqueQueueName('page');
    // The log on the queue's store (the default with --queue), under a namespace of this test.
    const logged = await startServe(fixture('deliveries'), ['--queue', REDIS_URL!, '--queue-name', name, '--queue-attempts', '1'], {
      PEER: peer.origin,
      ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY,
      ENDPOINT_SERVICE_DELIVERIES_NAMESPACE: name,
    });
    const browser = await launchChromium();
    try {
      const line = await logged.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('the deliveries page:'));
      const loginUrl = line.url as string;
      const origin = new URL(loginUrl).origin;
      const id = (await fetch(`${logged.url}/later`, { method: 'POST' })).headers.get('x-request-id')!;
      const page = await browser.newPage();
      await page.goto(loginUrl);
      // Until the job has failed and the page offers its retry.
      for (let i = 0; ; i++) {
        await page.goto(`${origin}/deliveries/${id}`);
        if ((await page.locator('button:has-text("Retry the failed tasks")').count()) > 0) break;
        if (i > 50) throw new Error(`no retry offered: ${await page.locator('main').textContent()}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(await page.locator('.timeline').textContent()).toContain('Queue job: failed');
      await page.click('button:has-text("Retry the failed tasks")');
      await page.waitForURL(/notice=retried/);
      for (let i = 0; peer.requestsTo('/slow').length < 2; i++) {
        if (i > 100) throw new Error('the retried task did not run');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      for (let i = 0; ; i++) {
        await page.goto(`${origin}/deliveries/${id}`);
        if ((await page.locator('.timeline').textContent())!.includes('Queue job: completed')) break;
        if (i > 50) throw new Error(`the job did not complete: ${await page.locator('.timeline').textContent()}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      await browser.close();
      await logged.stop();
      await peer.close();
      await deleteKeys(REDIS_URL!, [`bull:${name}:`, `${name}:`]);
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
