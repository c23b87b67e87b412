// The admin listener's deliveries page (docs/deliveries.md, "The page"): never on the public
// port, bound to 127.0.0.1 unless told otherwise, every answer behind the admin token, every
// action a same-origin POST with a CSRF token, and a Content-Security-Policy that lets the page
// load nothing but its own stylesheet and script.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DeliveryRecord, KeptRequest, Verdict } from '../deliveries/record.js';
import { VERDICTS } from '../deliveries/record.js';
import { unsealRequest } from '../deliveries/sealed-request.js';
import type { Cursor, DeliveryQuery, DeliveryStore } from '../deliveries/store.js';
import type { QueueKey } from '../queue/seal.js';
import type { QueueSettings } from '../queue/settings.js';
import type { JobsAdmin } from '../queue/admin.js';
import { SCRIPT, STYLESHEET } from './assets.js';
import { AdminAuth } from './auth.js';
import { html, type Html } from './html.js';
import { LiveRows } from './live.js';
import { detailPage, listPage, messagePage, type JobView, type Notice } from './pages.js';

export interface AdminOptions {
  readonly store: DeliveryStore;
  /** Opens kept requests for a reveal; null: the page shows no bodies. */
  readonly keys: readonly QueueKey[] | null;
  readonly token: string;
  /** serve --queue or worker: the queue whose jobs can be looked at, retried and discarded. */
  readonly queue: QueueSettings | null;
  /** A command that makes a first delivery, for the empty list; null when not known. */
  readonly example: () => string | null;
  readonly endpoints: readonly string[];
  readonly log: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

export interface AdminPage {
  /** http://HOST:PORT/ */
  readonly url: string;
  /** The URL that logs a browser in. */
  readonly loginUrl: string;
  close(): Promise<void>;
}

const PAGE_SIZE = 50;
const REPLAY_WAIT_MS = 20_000;

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  // Not no-referrer: Chromium then sends "Origin: null" with the page's own form posts, which the CSRF check refuses.
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
  'cross-origin-resource-policy': 'same-origin',
};

const NOTICES: Readonly<Record<string, Notice>> = {
  replayed: { kind: 'ok', text: 'Replayed: this is the new delivery.' },
  'replay-none': { kind: 'problem', text: 'No running serve took the replay within 20 seconds. A replay is sent by a serve that records into this log.' },
  'replay-failed': { kind: 'problem', text: 'The replay could not be sent. The service log says why (its line "delivery replayed").' },
  retried: { kind: 'ok', text: 'The job is queued again: its tasks that did not succeed run once more.' },
  discarded: { kind: 'ok', text: 'The job was discarded: its tasks will not run.' },
  'no-job': { kind: 'problem', text: 'The queue has no job for this delivery any more.' },
  'no-queue': { kind: 'problem', text: 'This page was started without the queue, so it cannot act on jobs.' },
};

/** The page's requests, for a listener of its own (startAdmin) or one it shares (worker's /_health and /_metrics). */
export interface AdminHandler {
  handle(request: IncomingMessage, response: ServerResponse): void;
  close(): Promise<void>;
}

export function adminHandler(options: AdminOptions): AdminHandler {
  const auth = new AdminAuth(options.token);
  const live = new LiveRows(options.store);
  let jobs: Promise<JobsAdmin> | null = null;
  const jobsAdmin = (): Promise<JobsAdmin> | null => {
    if (options.queue === null) return null;
    jobs ??= import('../queue/admin.js').then(({ JobsAdmin }) => JobsAdmin.open(options.queue!));
    return jobs;
  };
  const context: Context = { options, auth, live, jobsAdmin };
  return {
    handle(request, response) {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
      handle(context, request, response).catch((error: unknown) => {
        options.log('error', 'the deliveries page failed to answer', { error: error instanceof Error ? error.message : String(error) });
        if (!response.headersSent) send(response, 500, messagePage(500, 'Something went wrong', 'The page could not be made; the service log says why.'));
        else response.end();
      });
    },
    async close() {
      live.close();
      if (jobs !== null) await (await jobs.catch(() => null))?.close();
    },
  };
}

export function loginUrlOf(url: string, token: string): string {
  return `${url}?token=${encodeURIComponent(token)}`;
}

export async function startAdmin(host: string, port: number, options: AdminOptions): Promise<AdminPage> {
  const handler = adminHandler(options);
  const server: Server = createServer((request, response) => handler.handle(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}/`;
  return {
    url,
    loginUrl: loginUrlOf(url, options.token),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await handler.close();
    },
  };
}

interface Context {
  readonly options: AdminOptions;
  readonly auth: AdminAuth;
  readonly live: LiveRows;
  readonly jobsAdmin: () => Promise<JobsAdmin> | null;
}

function send(response: ServerResponse, status: number, page: Html, headers: Record<string, string> = {}): void {
  const body = page.text;
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
  response.end(body);
}

function redirect(response: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  response.writeHead(303, { location, 'content-length': 0, ...headers });
  response.end();
}

async function handle(context: Context, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://admin.invalid');
  const method = request.method ?? 'GET';
  if (url.pathname === '/assets/page.css' || url.pathname === '/assets/page.js') {
    const css = url.pathname.endsWith('.css');
    const body = css ? STYLESHEET : SCRIPT;
    response.writeHead(200, { 'content-type': css ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    response.end(method === 'HEAD' ? undefined : body);
    return;
  }
  const given = url.searchParams.get('token');
  if (given !== null) {
    if (!context.auth.loginToken(given)) return send(response, 401, unauthorized());
    // The token leaves the address bar (and the history) at once; the cookie holds it from now on.
    url.searchParams.delete('token');
    return redirect(response, url.pathname + (url.search === '?' ? '' : url.search), { 'set-cookie': context.auth.cookie() });
  }
  if (!context.auth.allows(request)) return send(response, 401, unauthorized(), { 'www-authenticate': 'Bearer' });

  if (method === 'GET' && url.pathname === '/') return send(response, 200, await list(context, url));
  if (method === 'GET' && url.pathname === '/events') return context.live.listen(response);
  const match = /^\/deliveries\/([^/]+)(?:\/(reveal|replay|retry|discard))?$/.exec(url.pathname);
  if (match === null) return send(response, 404, messagePage(404, 'Not found', html`There is no such page. <a href="/">All deliveries</a>`));
  const id = decodeURIComponent(match[1]!);
  const action = match[2];
  if (action === undefined && method === 'GET') return detail(context, response, id, null, url.searchParams.get('notice'));
  if (action === undefined || method !== 'POST')
    return send(response, 405, messagePage(405, 'Not allowed', 'Actions are sent from the page’s own buttons.'), {
      allow: action === undefined ? 'GET' : 'POST',
    });
  const form = new URLSearchParams(await readForm(request));
  if (!context.auth.actionAllowed(request, form, `http://${request.headers.host ?? ''}`))
    return send(
      response,
      403,
      messagePage(403, 'Refused', html`This action did not come from this page. <a href="/deliveries/${encodeURIComponent(id)}">Back to the delivery</a>`),
    );
  switch (action) {
    case 'reveal':
      return detail(context, response, id, 'reveal', null);
    case 'replay':
      return replay(context, response, id);
    case 'retry':
    case 'discard':
      return onJob(context, response, id, action);
  }
}

function unauthorized(): Html {
  return messagePage(
    401,
    'Log in first',
    'This page needs the admin token. Open the login URL that serve printed after its ready line (or set ENDPOINT_SERVICE_ADMIN_TOKEN and add ?token=… to this address); scripts send Authorization: Bearer.',
  );
}

function readForm(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      text += chunk;
      // A form of this page is a CSRF token: anything much larger is not one.
      if (text.length > 4096) request.destroy(new Error('form too large'));
    });
    request.on('end', () => resolve(text));
    request.on('error', reject);
  });
}

/** `YYYY-MM-DDTHH:MM` of a datetime-local field, read as UTC; null when empty or malformed. */
function utcField(value: string | null): number | null {
  if (value === null || value === '') return null;
  const ms = Date.parse(/Z$|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(ms) ? null : ms;
}

function cursorOf(text: string | null): Cursor | undefined {
  if (text === null) return undefined;
  const [receivedAt, id] = Buffer.from(text, 'base64url').toString('utf8').split('\n');
  return receivedAt !== undefined && id !== undefined ? { receivedAt, id } : undefined;
}

async function list(context: Context, url: URL): Promise<Html> {
  const p = url.searchParams;
  const form: Record<string, string> = {};
  for (const name of ['endpoint', 'verdict', 'status', 'since', 'until', 'q']) form[name] = (p.get(name) ?? '').trim();
  const verdict = VERDICTS.includes(form.verdict as Verdict) ? (form.verdict as Verdict) : undefined;
  const status = /^[1-5]\d\d$/.test(form.status!) ? Number(form.status) : undefined;
  const since = utcField(form.since!);
  const until = utcField(form.until!);
  const after = cursorOf(p.get('after'));
  const query: DeliveryQuery = {
    ...(form.endpoint !== '' ? { endpoint: form.endpoint! } : {}),
    ...(verdict !== undefined ? { verdict } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(since !== null ? { since } : {}),
    ...(until !== null ? { until } : {}),
    ...(form.q !== '' ? { text: form.q! } : {}),
    ...(after !== undefined ? { after } : {}),
    limit: PAGE_SIZE,
  };
  const now = Date.now();
  const store = context.options.store;
  const [records, hour, day] = await Promise.all([store.list(query), store.counts(now - 3_600_000), store.counts(now - 86_400_000)]);
  let older: string | null = null;
  if (records.length === PAGE_SIZE) {
    const last = records[records.length - 1]!;
    const next = new URLSearchParams(Object.entries(form).filter(([, v]) => v !== ''));
    next.set('after', Buffer.from(`${last.receivedAt}\n${last.id}`).toString('base64url'));
    older = `/?${next.toString()}`;
  }
  return listPage({ records, query, form, hour, day, older, example: context.options.example(), endpoints: context.options.endpoints });
}

async function jobView(context: Context, record: DeliveryRecord): Promise<JobView | null> {
  const opening = record.job !== null ? context.jobsAdmin() : null;
  if (opening === null) return null;
  try {
    const admin = await opening;
    const [job] = await admin.find(record.id);
    if (job === undefined) return null;
    const d = await admin.detail(job);
    const lines: string[] = [];
    for (const [task, messages] of Object.entries(d.mail)) {
      for (const [index, mail] of Object.entries(messages))
        lines.push(`mail of ${task}, message ${Number(index) + 1}: ${mail.state}, Message-ID ${mail.messageId}`);
    }
    for (const u of d.deliveryUnknown) lines.push(`delivery unknown: task ${u.task}, message ${u.message}, Message-ID ${u.messageId}`);
    if (d.error !== null) lines.push(d.error);
    return { state: d.state, attempts: d.attempts, failed: d.state === 'failed', lines };
  } catch (error) {
    context.options.log('warn', 'the deliveries page cannot reach the queue', { error: error instanceof Error ? error.message : String(error) });
    return null;
  }
}

async function detail(context: Context, response: ServerResponse, id: string, reveal: 'reveal' | null, notice: string | null): Promise<void> {
  const stored = await context.options.store.get(id);
  if (stored === null)
    return send(
      response,
      404,
      messagePage(
        404,
        'No such delivery',
        html`The log has no delivery <code>${id}</code>: it may be older than the log keeps. <a href="/">All deliveries</a>`,
      ),
    );
  const keys = context.options.keys;
  let revealed: KeptRequest | null = null;
  let revealProblem: string | null = null;
  if (reveal !== null && keys !== null && stored.sealed !== null) {
    try {
      revealed = unsealRequest(keys, id, stored.sealed);
    } catch {
      revealProblem = 'The request was sealed under another key than the one this page has, so it cannot be opened here.';
    }
  }
  send(
    response,
    200,
    detailPage({
      record: stored.record,
      revealed,
      revealProblem,
      job: await jobView(context, stored.record),
      notice: notice !== null ? (NOTICES[notice] ?? null) : null,
      csrf: context.auth.csrf,
      canReveal: keys !== null,
    }),
  );
}

async function replay(context: Context, response: ServerResponse, id: string): Promise<void> {
  const store = context.options.store;
  const back = `/deliveries/${encodeURIComponent(id)}`;
  const ticket = await store.requestReplay(id);
  const until = Date.now() + REPLAY_WAIT_MS;
  for (;;) {
    const outcome = await store.replayOutcome(ticket);
    if (outcome !== null && !outcome.ok) return redirect(response, `${back}?notice=replay-failed`);
    // The new delivery is answered before it is written (the log's batch): the redirect waits for it.
    if (outcome !== null && (await store.get(outcome.delivery)) !== null)
      return redirect(response, `/deliveries/${encodeURIComponent(outcome.delivery)}?notice=replayed`);
    if (Date.now() >= until) return redirect(response, `${back}?notice=replay-none`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function onJob(context: Context, response: ServerResponse, id: string, action: 'retry' | 'discard'): Promise<void> {
  const back = `/deliveries/${encodeURIComponent(id)}`;
  const opening = context.jobsAdmin();
  if (opening === null) return redirect(response, `${back}?notice=no-queue`);
  const admin = await opening;
  const found = await admin.find(id);
  if (found.length === 0) return redirect(response, `${back}?notice=no-job`);
  for (const job of found) {
    if (action === 'discard') await admin.discard(job);
    else if ((await job.getState()) === 'failed') await admin.retry(job);
  }
  redirect(response, `${back}?notice=${action === 'retry' ? 'retried' : 'discarded'}`);
}
