// The error answer for a person: when a browser navigates or posts a form (its Accept prefers
// text/html) and the endpoint has no <error> action, a small self-contained HTML page instead of
// problem+json, which a browser would show as raw JSON. fetch(), curl and API clients ask for
// */* or JSON and keep problem+json, whose detail is for developers and is a contract.
//
// The page speaks to the visitor who sent the form: what to fix, in the form's own field names,
// or that we could not process the message. It never shows what only the operator can act on
// (a task's id, a byte limit, an upstream's host): that detail goes to the log, found by the
// request id the page shows. The way back is a plain link (the page's CSP allows no script, so
// no history.back()) to the page the form was on, when that page is of this site.

import type { IncomingMessage } from 'node:http';
import { missingParameterDetail, type ParameterError } from '../runtime/parameters.js';
import { escapeHtml } from '../template/escape.js';

/** True when Accept names text/html and ranks it at least as high as any JSON type it names. */
export function prefersHtml(request: IncomingMessage | undefined): boolean {
  const accept = request?.headers.accept?.toLowerCase();
  if (accept === undefined || !accept.includes('html')) return false;
  let html = 0;
  let json = 0;
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.trim().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q)) continue;
    if (type.trim() === 'text/html') html = Math.max(html, q);
    else if (type.trim() === 'application/json' || type.trim() === 'application/problem+json') json = Math.max(json, q);
  }
  return html > 0 && html >= json;
}

/** Headers the page is sent with: it loads nothing, runs nothing, and says nothing about where it came from. */
export const ERROR_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

/** What the page says: a heading and a sentence a visitor can act on. */
interface VisitorText {
  readonly heading: string;
  readonly text: string;
}

const TRY_LATER: VisitorText = { heading: 'Something went wrong on our side', text: 'We could not process your message. Please try again later.' };

/** By status; the service's own wording for the developer stays in problem+json and in the log. */
const BY_STATUS: Readonly<Record<number, VisitorText>> = {
  400: { heading: 'Please check the form', text: 'Some of what was sent could not be accepted. Please go back, check the form and send it again.' },
  401: {
    heading: 'This form could not be sent',
    text: 'It could not be confirmed that the form came from its own page. Please go back, reload the page and send it again.',
  },
  403: {
    heading: 'This form could not be sent',
    text: 'Your message could not be accepted from here. Please go back, reload the page, complete any check it shows and send it again.',
  },
  404: { heading: 'Page not found', text: 'There is nothing at this address. Please check the link you followed.' },
  405: { heading: 'This page cannot be used this way', text: 'Please go back and use the form on the page.' },
  413: { heading: 'What you sent is too large', text: 'Please go back and send smaller files or a shorter message.' },
  415: { heading: 'This form could not be read', text: 'Please go back and send the form again.' },
  429: { heading: 'Too many attempts', text: 'This form was sent too often. Please wait a while, then try again.' },
  431: { heading: 'This request could not be read', text: 'Please go back and try again.' },
};

function visitorText(status: number): VisitorText {
  return (
    BY_STATUS[status] ??
    (status >= 500 ? TRY_LATER : { heading: 'Your message could not be accepted', text: 'Please go back, check the form and send it again.' })
  );
}

/** One line per field to fix, by the form's field name, never with the value sent. */
function fieldLine(error: ParameterError): string {
  const field = `“${escapeHtml(error.parameter)}”`;
  return error.detail === missingParameterDetail(error.parameter) ? `Please fill in ${field}.` : `Please check ${field}.`;
}

/**
 * `back`: the page the form was on, when it is of this site (sameOriginReferer), for a link back;
 * otherwise the page says how to go back.
 */
export function errorPage(status: number, requestId: string, errors: readonly ParameterError[] = [], back: string | null = null): string {
  const { heading, text } = visitorText(status);
  const list = errors.length > 0 ? `<ul>${errors.map((e) => `<li>${fieldLine(e)}</li>`).join('')}</ul>\n` : '';
  const way =
    back !== null
      ? `<p><a href="${escapeHtml(back)}">Back to the form</a></p>`
      : '<p>Use your browser’s Back button to return to the form; what you entered is usually still there.</p>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(heading)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}small{color:#666}</style>
</head>
<body>
<h1>${escapeHtml(heading)}</h1>
<p>${escapeHtml(text)}</p>
${list}${way}
<p><small>If you contact us about this, please give this reference: ${escapeHtml(requestId)} (error ${status}).</small></p>
</body>
</html>
`;
}

/**
 * The request's Referer when it names a page of the host the request was sent to (http or https),
 * else null: a link back to another site's page, or to a `javascript:` URL, is not ours to offer.
 */
export function sameOriginReferer(request: IncomingMessage | undefined): string | null {
  const referer = request?.headers.referer;
  const host = request?.headers.host;
  if (referer === undefined || host === undefined) return null;
  let url: URL;
  try {
    url = new URL(referer);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.host.toLowerCase() !== host.toLowerCase()) return null;
  return url.href;
}
