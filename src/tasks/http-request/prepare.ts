// CONTRACT: pure, no I/O. Expands an HttpRequest task for one request.
//
// Literal template parts were escaped for their context at compile time and placeholder values
// are escaped by expandTemplate, so this module only assembles the pieces. Errors thrown here
// (UnsafeValueError for a CR/LF in a header, or any character node:http would refuse there;
// MissingValueError) are failures of the task.
import { createHash } from 'node:crypto';
import { refusedHeaderCharacter } from '../../header-value.js';
import { expandChecked, type ValueProblem } from '../../template/checked.js';
import type { NamedTemplate } from '../../template/types.js';
import { escapeForm, placeholdersOf, UnsafeValueError } from '../../template/escape.js';
import { expandTemplate, usesEnv, type ExpansionScope } from '../../template/expand.js';
import { expandUrl, urlCulprits } from '../../template/url.js';
import { requestTargetProblem } from './target.js';
import type { RawBody } from '../../upload.js';
import type { HttpRequestTask, PreparedHttpRequest } from './types.js';
import { prepareSigning } from './sign.js';
import { DEFAULT_HTTP_REQUEST_SETTINGS, type HttpRequestTaskSettings } from './settings.js';

/**
 * Headers that carry credentials whatever their template: a literal token written into the
 * configuration is as secret as one read from ${env:...}.
 */
const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization']);

/** A header shown as *** in plans and never logged: a credential, or a value read from ${env:...}. */
function isSecretHeader(header: NamedTemplate): boolean {
  return usesEnv(header.value) || CREDENTIAL_HEADERS.has(header.name.toLowerCase());
}

/** The parameters written into a secret header or into basic authentication: secrets too. */
export function secretParameters(task: HttpRequestTask): string[] {
  const templates = [
    ...task.headers.filter(isSecretHeader).map((h) => h.value),
    ...(task.basicAuth !== null ? [task.basicAuth.username, task.basicAuth.password] : []),
  ];
  return [...new Set(templates.flatMap((t) => t.parts.flatMap((p) => (p.kind === 'parameter' ? [p.name] : []))))];
}

/** `received`: the request body as received, for <forward-request-body/>; null: the request had none. */
/** The task's URL expanded, or an UnsafeValueError naming the values that make it no valid request target. */
function taskUrl(task: HttpRequestTask, scope: ExpansionScope): string {
  // expandUrl: a value that makes a path segment "." or ".." is refused (it would shorten the path).
  const url = appendQuery(expandUrl(task.url, scope), formEncode(task.getParameters, scope));
  // dry-run's display shows stand-ins (`***` for a secret) where the real values were checked.
  const targetProblem = scope.verbatim === undefined ? requestTargetProblem(url) : null;
  if (targetProblem === null) return url;
  // A placeholder at the very start is inserted unescaped; elsewhere a value still makes no
  // valid host or port once escaped (`http://${h}/x`, h=127.0.0.1:8080). Else the written text is to blame.
  const first = task.url.parts[0];
  const culprits =
    first !== undefined && first.kind !== 'literal'
      ? [first]
      : urlCulprits(task.url, scope, (candidate) => requestTargetProblem(appendQuery(candidate, formEncode(task.getParameters, scope))) !== null);
  throw new UnsafeValueError(`the task URL is ${targetProblem}`, { reason: `makes the task URL ${targetProblem}`, culprits });
}

export function prepareHttpRequest(
  task: HttpRequestTask,
  scope: ExpansionScope,
  settings: HttpRequestTaskSettings = DEFAULT_HTTP_REQUEST_SETTINGS,
  received: RawBody | null = null,
): PreparedHttpRequest {
  const url = taskUrl(task, scope);

  const headers: Record<string, string> = {};
  const secret = new Set<string>();
  for (const header of task.headers) {
    const name = header.name.toLowerCase();
    // Checked as node:http will check it when got sends it, so a value it would refuse fails
    // here, before the request's first side effect, not after the earlier tasks have run.
    const value = expandChecked(header.value, scope, `the ${header.name} header`, httpHeaderProblem);
    // A repeated header is one field with a comma-separated list (RFC 9110, 5.3).
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    if (isSecretHeader(header)) secret.add(name);
  }

  if (task.basicAuth !== null) {
    const username = expandTemplate(task.basicAuth.username, scope);
    const password = expandTemplate(task.basicAuth.password, scope);
    // RFC 7617: the user-id ends at the first colon, so a colon would log in as someone else.
    if (username.includes(':')) {
      throw new UnsafeValueError('the basic authentication username contains a colon (":"), which is not allowed', {
        reason: 'contains a colon, which a basic authentication username cannot hold',
        culprits: placeholdersOf(task.basicAuth.username),
      });
    }
    headers['authorization'] = 'Basic ' + Buffer.from(`${username}:${password}`, 'utf8').toString('base64');
    secret.add('authorization');
  }

  let body: string | RawBody | null = null;
  let defaultContentType: string | null = null;
  if (task.body !== null) {
    switch (task.body.kind) {
      case 'json':
        body = expandTemplate(task.body.template, scope);
        defaultContentType = 'application/json';
        break;
      case 'xml':
        body = expandTemplate(task.body.template, scope);
        defaultContentType = 'application/xml';
        break;
      case 'form':
        body = formEncode(task.body.parameters, scope);
        defaultContentType = 'application/x-www-form-urlencoded';
        break;
      case 'forward': {
        // Byte for byte, with the type it was sent with (its charset too); a request without a
        // body forwards an empty one, without a type.
        body = received ?? '';
        if (received !== null && received.contentType !== '') defaultContentType = received.contentType;
        break;
      }
    }
  }
  if (defaultContentType !== null && !('content-type' in headers)) headers['content-type'] = defaultContentType;
  // The header an author writes wins; otherwise one key per task and request (per delivery, with
  // <deduplicate>), the same for every retry, so the receiving API can recognise a repeat (IETF
  // draft Idempotency-Key).
  if (settings.idempotencyKeys && (task.method === 'POST' || task.method === 'PATCH') && !('idempotency-key' in headers)) {
    headers['idempotency-key'] = idempotencyKey(scope.delivery ?? scope.system['request-id'], scope.system.endpoint, task.id);
  }

  // Shown by dry-run, not sent: its secret is a stand-in there (describe shows the headers).
  const signing = task.sign !== null && scope.verbatim === undefined ? prepareSigning(task.sign, scope, task.id) : null;
  return { method: task.method, url, headers, body, secretHeaders: [...secret], signing };
}

const REFUSED_IN_HEADER = 'contains a character that is not allowed in an HTTP header value';

function httpHeaderProblem(value: string): ValueProblem | null {
  const at = refusedHeaderCharacter(value);
  return at < 0 ? null : { at, reason: REFUSED_IN_HEADER };
}

/** 32 hex characters derived from the request (or its delivery id), the endpoint and the task: stable, and unguessable without the request id. */
export function idempotencyKey(requestId: string, endpoint: string, taskId: string): string {
  return createHash('sha256').update(`${requestId}\n${endpoint}\n${taskId}`).digest('hex').slice(0, 32);
}

/** `name=value&...`: names are literal and encoded here, values are form-escaped templates. */
function formEncode(parameters: readonly NamedTemplate[], scope: ExpansionScope): string {
  return parameters.map((p) => `${escapeForm(p.name)}=${expandTemplate(p.value, scope)}`).join('&');
}

/** Adds to a query the URL may already have, before any fragment. */
function appendQuery(url: string, query: string): string {
  if (query === '') return url;
  const hash = url.indexOf('#');
  const base = hash >= 0 ? url.slice(0, hash) : url;
  const fragment = hash >= 0 ? url.slice(hash) : '';
  const separator = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return base + separator + query + fragment;
}
