// The error answer for a person: when a browser navigates or posts a form (its Accept prefers
// text/html) and the endpoint has no <error> action, a small self-contained HTML page instead of
// problem+json, which a browser would show as raw JSON. fetch(), curl and API clients ask for
// */* or JSON and keep problem+json.

import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { ParameterError } from '../runtime/parameters.js';
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

/** Headers the page is sent with: it loads nothing, and says nothing about where it came from. */
export const ERROR_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

export function errorPage(status: number, detail: string, requestId: string, errors: readonly ParameterError[] = []): string {
  const title = `${status} ${STATUS_CODES[status] ?? 'Error'}`;
  const list = errors.length > 1 ? `<ul>${errors.map((e) => `<li>${escapeHtml(e.detail)}</li>`).join('')}</ul>` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}small{color:#666}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(capitalise(detail))}.</p>
${list}<p><small>Request id: ${escapeHtml(requestId)}</small></p>
</body>
</html>
`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
