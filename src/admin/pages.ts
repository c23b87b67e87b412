// The deliveries page as HTML: the list (counts, filters, rows, the next page) and one
// delivery (its timeline, its request behind a reveal, its actions). Server-rendered and
// complete without JavaScript; page.js only adds local times and live rows.

import type { DeliveryRecord, KeptRequest, TaskRecord } from '../deliveries/record.js';
import { VERDICTS } from '../deliveries/record.js';
import type { DeliveryQuery } from '../deliveries/store.js';
import { html, type Html } from './html.js';

export interface Counts {
  readonly verdicts: Readonly<Record<string, number>>;
  readonly endpoints: Readonly<Record<string, number>>;
}

export interface ListView {
  readonly records: readonly DeliveryRecord[];
  readonly query: DeliveryQuery;
  /** The filters as given, to fill the form again. */
  readonly form: Readonly<Record<string, string>>;
  readonly hour: Counts;
  readonly day: Counts;
  /** The link to the next (older) page; null on the last. */
  readonly older: string | null;
  /** Where to post to see a first delivery, when known (serve: its origin and an endpoint). */
  readonly example: string | null;
  readonly endpoints: readonly string[];
}

/** What the log shows of a queued job, when the queue can be asked. */
export interface JobView {
  readonly state: string;
  readonly attempts: number;
  readonly failed: boolean;
  readonly lines: readonly string[];
}

export interface DetailView {
  readonly record: DeliveryRecord;
  readonly revealed: KeptRequest | null;
  /** Why the request cannot be shown, when it was asked for and cannot be. */
  readonly revealProblem: string | null;
  readonly job: JobView | null;
  readonly notice: Notice | null;
  readonly csrf: string;
  readonly canReveal: boolean;
}

export interface Notice {
  readonly kind: 'ok' | 'problem';
  readonly text: string;
}

/** Headers whose values are credentials or signatures: masked even when the request is revealed. */
const MASKED = /authorization|cookie|signature|hmac|token|secret|api-?key|password/i;

export function layout(title: string, body: Html): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · endpoint-service</title>
        <link rel="stylesheet" href="/assets/page.css" />
        <script src="/assets/page.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to the content</a>
        <header class="top"><a class="brand" href="/">endpoint-service</a> <span class="where">Deliveries</span></header>
        <main id="main">${body}</main>
      </body>
    </html> `;
}

function time(iso: string): Html {
  const shown = iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  return html`<time datetime="${iso}">${shown}</time>`;
}

function verdictBadge(verdict: string): Html {
  return html`<span class="verdict verdict-${verdict}">${verdict}</span>`;
}

function taskSummary(tasks: readonly TaskRecord[]): Html {
  if (tasks.length === 0) return html`<span class="muted">none</span>`;
  return html`${tasks.map((t, i) => html`${i > 0 ? ', ' : ''}<span class="task task-${t.state}">${t.id} ${t.state}</span>`)}`;
}

export function row(record: DeliveryRecord): Html {
  return html`<tr id="d-${record.id}">
    <td><a href="/deliveries/${encodeURIComponent(record.id)}">${time(record.receivedAt)}</a></td>
    <td>${record.endpoint}</td>
    <td><code>${record.method} ${record.path}</code></td>
    <td>${record.status === 0 ? '—' : record.status}</td>
    <td>${verdictBadge(record.verdict)}</td>
    <td class="reason">${record.reason ?? ''}</td>
    <td>${taskSummary(record.tasks)}</td>
  </tr>`;
}

function countsTable(view: ListView): Html {
  const verdicts = VERDICTS.filter((v) => (view.day.verdicts[v] ?? 0) > 0);
  const endpoints = Object.keys(view.day.endpoints).sort();
  if (verdicts.length === 0) return html``;
  return html`<section class="counts" aria-labelledby="counts-heading">
    <h2 id="counts-heading">Last hour and last day</h2>
    <div class="count-tables">
      <table>
        <caption>
          By verdict
        </caption>
        <thead>
          <tr>
            <th scope="col">Verdict</th>
            <th scope="col">Hour</th>
            <th scope="col">Day</th>
          </tr>
        </thead>
        <tbody>
          ${verdicts.map(
            (v) =>
              html`<tr>
                <th scope="row"><a href="/?verdict=${v}">${verdictBadge(v)}</a></th>
                <td>${view.hour.verdicts[v] ?? 0}</td>
                <td>${view.day.verdicts[v] ?? 0}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      <table>
        <caption>
          By endpoint
        </caption>
        <thead>
          <tr>
            <th scope="col">Endpoint</th>
            <th scope="col">Hour</th>
            <th scope="col">Day</th>
          </tr>
        </thead>
        <tbody>
          ${endpoints.map(
            (e) =>
              html`<tr>
                <th scope="row"><a href="/?endpoint=${encodeURIComponent(e)}">${e}</a></th>
                <td>${view.hour.endpoints[e] ?? 0}</td>
                <td>${view.day.endpoints[e] ?? 0}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}

function filters(view: ListView): Html {
  const f = view.form;
  const option = (value: string, label: string, current: string | undefined) =>
    html`<option value="${value}" ${current === value ? html` selected` : ''}>${label}</option>`;
  const endpoints = [...new Set([...view.endpoints, ...Object.keys(view.day.endpoints)])].sort();
  return html`<form class="filters" method="get" action="/" role="search" aria-label="Filter deliveries">
    <div>
      <label for="f-endpoint">Endpoint</label>
      <select id="f-endpoint" name="endpoint">
        ${option('', 'any', f.endpoint ?? '')}${endpoints.map((e) => option(e, e, f.endpoint))}
      </select>
    </div>
    <div>
      <label for="f-verdict">Verdict</label>
      <select id="f-verdict" name="verdict">
        ${option('', 'any', f.verdict ?? '')}${VERDICTS.map((v) => option(v, v, f.verdict))}
      </select>
    </div>
    <div>
      <label for="f-status">Status</label>
      <input id="f-status" name="status" inputmode="numeric" pattern="[1-5][0-9][0-9]" size="4" value="${f.status ?? ''}" />
    </div>
    <div><label for="f-since">From (UTC)</label> <input id="f-since" name="since" type="datetime-local" value="${f.since ?? ''}" /></div>
    <div><label for="f-until">To (UTC)</label> <input id="f-until" name="until" type="datetime-local" value="${f.until ?? ''}" /></div>
    <div class="grow">
      <label for="f-q">Search</label> <input id="f-q" name="q" type="search" placeholder="id, deduplication key or reason" value="${f.q ?? ''}" />
    </div>
    <div class="buttons"><button type="submit">Filter</button> <a href="/">Clear</a></div>
  </form>`;
}

export function listPage(view: ListView): Html {
  const filtered = Object.values(view.form).some((v) => v !== '');
  const live = !filtered && view.query.after === undefined;
  const empty = filtered
    ? html`<p class="empty" role="status">No delivery matches these filters. <a href="/">Show all deliveries</a>.</p>`
    : html`<div class="empty" role="status">
        <p><strong>No deliveries yet.</strong> Every request to an endpoint shows here, accepted or refused, with what its tasks did.</p>
        ${view.example !== null ? html`<p>Try one: <code>${view.example}</code></p>` : ''}
      </div>`;
  return layout(
    'Deliveries',
    html`<h1>Deliveries</h1>
      ${countsTable(view)} ${filters(view)}
      <p class="live" id="live" hidden${live ? html` data-live="on"` : ''}>Live: new deliveries appear at the top.</p>
      ${view.records.length === 0 && view.query.after === undefined ? empty : ''}
      <table class="deliveries" ${view.records.length === 0 ? html` hidden` : ''}>
        <caption>
          Newest first${filtered ? ', filtered' : ''}
        </caption>
        <thead>
          <tr>
            <th scope="col">Received</th>
            <th scope="col">Endpoint</th>
            <th scope="col">Request</th>
            <th scope="col">Status</th>
            <th scope="col">Verdict</th>
            <th scope="col">Reason</th>
            <th scope="col">Tasks</th>
          </tr>
        </thead>
        <tbody id="rows">
          ${view.records.map(row)}
        </tbody>
      </table>
      ${view.older !== null ? html`<nav class="pages" aria-label="Pages"><a href="${view.older}" rel="next">Older deliveries</a></nav>` : ''}`,
  );
}

function taskLine(t: TaskRecord): Html {
  const parts = [`${t.attempts} attempt${t.attempts === 1 ? '' : 's'}`];
  if (t.status !== null) parts.push(`status ${t.status}`);
  if (t.durationMs !== null) parts.push(`${t.durationMs} ms`);
  return html`<li class="step task-${t.state}">
    <span class="what">Task <strong>${t.id}</strong> (${t.kind}): ${t.state}</span> <span class="muted">${parts.join(' · ')}</span>${
      t.error !== null ? html`<div class="error">${t.error}</div>` : ''
    }
  </li>`;
}

function actionForm(path: string, label: string, csrf: string, hint: string): Html {
  return html`<form method="post" action="${path}" class="action">
    <input type="hidden" name="csrf" value="${csrf}" /><button type="submit">${label}</button> <span class="hint">${hint}</span>
  </form>`;
}

function requestSection(view: DetailView): Html {
  const { record, revealed } = view;
  const base = `/deliveries/${encodeURIComponent(record.id)}`;
  if (record.request === 'not-kept')
    return html`<p>The request was not kept: its body was over the size the log keeps, it was refused before its body was read, or no sealing key was set.</p>`;
  if (revealed === null) {
    if (!view.canReveal)
      return html`<p>The request is kept sealed. This page was started without the key that opens it, so its headers and body cannot be shown here.</p>`;
    return html`${view.revealProblem !== null ? html`<p class="notice notice-problem" role="alert">${view.revealProblem}</p>` : ''}
    ${actionForm(`${base}/reveal`, 'Reveal headers and body', view.csrf, 'Credentials and signatures stay masked.')}`;
  }
  const text = revealed.body.toString('utf8');
  const utf8 = Buffer.from(text, 'utf8').equals(revealed.body);
  return html`<p><code>${revealed.method} ${revealed.url}</code></p>
    <table class="headers">
      <caption>
        Headers
      </caption>
      <tbody>
        ${revealed.headers.map(
          ([name, value]) =>
            html`<tr>
              <th scope="row">${name}</th>
              <td>${MASKED.test(name) ? html`<span class="masked">masked</span>` : value}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <h3>Body</h3>
    ${revealed.body.length === 0 ? html`<p class="muted">No body.</p>` : html`<pre class="body" tabindex="0">${utf8 ? text : `(${revealed.body.length} bytes, not UTF-8; base64) ${revealed.body.toString('base64')}`}</pre>`}`;
}

export function detailPage(view: DetailView): Html {
  const r = view.record;
  const base = `/deliveries/${encodeURIComponent(r.id)}`;
  const facts: [string, Html | string][] = [
    ['Endpoint', r.endpoint],
    ['Request', html`<code>${r.method} ${r.path}</code> from ${r.client}`],
    ['Answer', r.status === 0 ? 'none: the client went away' : `${r.status} in ${r.durationMs} ms`],
  ];
  if (r.deduplicationKey !== null) facts.push(['Deduplication key', html`<code>${r.deduplicationKey}</code>`]);
  if (r.replayOf !== null) facts.push(['Replay of', html`<a href="/deliveries/${encodeURIComponent(r.replayOf)}"><code>${r.replayOf}</code></a>`]);
  if (r.job !== null) facts.push(['Queue job', html`<code>${r.job}</code>`]);
  const job = view.job;
  return layout(
    `Delivery ${r.id}`,
    html`<p class="back"><a href="/">← All deliveries</a></p>
      <h1>Delivery <code class="id">${r.id}</code></h1>
      ${view.notice !== null ? html`<p class="notice notice-${view.notice.kind}" role="${view.notice.kind === 'ok' ? 'status' : 'alert'}">${view.notice.text}</p>` : ''}
      <p>${verdictBadge(r.verdict)}${r.reason !== null ? html` <span class="reason">${r.reason}</span>` : ''}</p>
      <dl class="facts">
        ${facts.map(
          ([k, v]) =>
            html`<dt>${k}</dt>
              <dd>${v}</dd>`,
        )}
      </dl>
      <h2>Timeline</h2>
      <ol class="timeline">
        <li class="step"><span class="what">Received</span> ${time(r.receivedAt)}</li>
        <li class="step">
          <span class="what">Answered ${r.status === 0 ? '—' : r.status}: ${r.verdict}</span
          >${r.reason !== null ? html` <span class="muted">${r.reason}</span>` : ''}
        </li>
        ${r.tasks.map(taskLine)}
        ${
          job !== null
            ? html`<li class="step">
                <span class="what">Queue job: ${job.state}</span> <span class="muted">${job.attempts} attempt${job.attempts === 1 ? '' : 's'} ended</span>${
                  job.lines.length > 0
                    ? html`<ul>
                        ${job.lines.map((l) => html`<li>${l}</li>`)}
                      </ul>`
                    : ''
                }
              </li>`
            : ''
        }
      </ol>
      <h2>Request</h2>
      ${requestSection(view)}
      <h2>Actions</h2>
      ${r.request === 'sealed' ? actionForm(`${base}/replay`, 'Replay', view.csrf, 'Sends the request again through the application as configured now, as a new delivery; the honeypot, CAPTCHA, rate limits and deduplication are not applied.') : html`<p class="muted">It cannot be replayed: its request was not kept.</p>`}
      ${job !== null && job.failed ? actionForm(`${base}/retry`, 'Retry the failed tasks', view.csrf, 'Runs the queued job again; tasks that succeeded do not run again.') : ''}
      ${job !== null && job.state !== 'completed' ? actionForm(`${base}/discard`, 'Discard the job', view.csrf, 'Removes the job from the queue; its tasks will not run.') : ''}`,
  );
}

export function messagePage(status: number, title: string, text: Html | string): Html {
  return layout(
    title,
    html`<h1>${title}</h1>
      <p>${text}</p>
      <p class="muted">${status}</p>`,
  );
}
