// Turning a compiled action into a response: the only place where a primary action does I/O
// (opening a static file, requesting an upstream). Everything else was decided at compile time.

import { open } from 'node:fs/promises';
import type { ErrorAction, RedirectAction, StaticAction, SuccessAction, UrlAction } from '../compiler/ast.js';
import type { Template } from '../template/types.js';
import { expandTemplate, type ExpansionScope } from '../template/expand.js';
import { loadGot } from '../tasks/http-request.js';
import { downloadFilenameRefusal, redirectRefusal } from './primary-rules.js';
import type { RuntimeResponse } from './response.js';

/** Why a primary action failed: `detail` may be shown to a client, `internal` only to logs and ${internal-error-text}. */
export interface ActionFailure {
  readonly status: number;
  readonly detail: string;
  readonly internal: string;
}

export type PreparedAction = { readonly ok: true; readonly response: RuntimeResponse } | { readonly ok: false; readonly failure: ActionFailure };

export interface ActionContext {
  /** Upper bound for an upstream of response-from-url (connect to last byte). */
  readonly upstreamTimeoutMs: number;
}

type LocalAction = Exclude<SuccessAction, { kind: 'forward' }> | ErrorAction;

/**
 * Prepares an action. `errorStatus` is null for a <success> action; for an <error> action it
 * is the failure's status, which the action keeps unless it sets its own.
 */
export async function prepareAction(
  action: LocalAction,
  scope: ExpansionScope,
  context: ActionContext,
  errorStatus: number | null,
): Promise<PreparedAction> {
  switch (action.kind) {
    case 'empty':
      return { ok: true, response: { kind: 'empty', status: errorStatus ?? 200 } };
    case 'redirect':
      return prepareRedirect(action, scope);
    case 'body':
      return {
        ok: true,
        response: {
          kind: 'body',
          status: action.status ?? errorStatus ?? 200,
          contentType: action.contentType,
          body: expandTemplate(action.body, scope),
        },
      };
    case 'static':
      return prepareStatic(action, scope, errorStatus ?? 200);
    case 'url':
      return prepareUrl(action, scope, context, errorStatus);
  }
}

/**
 * A <success> action that needs no I/O, answered without a promise: the common case of the
 * hot path. null when the action needs I/O or fails (the caller then takes the full path).
 */
export function prepareImmediate(action: SuccessAction, scope: ExpansionScope): RuntimeResponse | null {
  switch (action.kind) {
    case 'empty':
      return EMPTY_OK;
    case 'body':
      return { kind: 'body', status: action.status ?? 200, contentType: action.contentType, body: expandTemplate(action.body, scope) };
    case 'redirect': {
      const prepared = prepareRedirect(action, scope);
      return prepared.ok ? prepared.response : null;
    }
    default:
      return null;
  }
}
const EMPTY_OK: RuntimeResponse = { kind: 'empty', status: 200 };

function prepareRedirect(action: RedirectAction, scope: ExpansionScope): PreparedAction {
  const location = expandTemplate(action.url, scope);
  const refusal = redirectRefusal(location, action.whitelist);
  if (refusal !== null) return { ok: false, failure: { status: 400, detail: refusal, internal: refusal } };
  // A value at the start of the URL is inserted as is: spaces, non-ASCII and above all CR/LF
  // from a request must not reach the Location header raw.
  let header: string;
  try {
    header = location.replace(/[^\x21-\x7e]+/g, (run) => encodeURI(run));
  } catch {
    const detail = 'the redirect target is not a valid URL';
    return { ok: false, failure: { status: 400, detail, internal: detail } };
  }
  return { ok: true, response: { kind: 'redirect', status: 302, location: header } };
}

function downloadFilename(template: Template | null, scope: ExpansionScope): { ok: true; name: string | null } | { ok: false; failure: ActionFailure } {
  if (template === null) return { ok: true, name: null };
  const name = expandTemplate(template, scope);
  const refusal = downloadFilenameRefusal(name);
  if (refusal !== null) return { ok: false, failure: { status: 400, detail: refusal, internal: refusal } };
  return { ok: true, name };
}

async function prepareStatic(action: StaticAction, scope: ExpansionScope, status: number): Promise<PreparedAction> {
  const name = downloadFilename(action.downloadFilename, scope);
  if (!name.ok) return name;
  let file;
  try {
    file = await open(action.absolutePath, 'r');
  } catch (error) {
    return { ok: false, failure: { status: 500, detail: 'the response file could not be read', internal: `cannot open static/${action.filename}: ${reason(error)}` } };
  }
  try {
    const stats = await file.stat();
    return { ok: true, response: { kind: 'file', status, contentType: action.contentType, file, size: stats.size, downloadFilename: name.name } };
  } catch (error) {
    await file.close().catch(() => {});
    return { ok: false, failure: { status: 500, detail: 'the response file could not be read', internal: `cannot read static/${action.filename}: ${reason(error)}` } };
  }
}

async function prepareUrl(action: UrlAction, scope: ExpansionScope, context: ActionContext, errorStatus: number | null): Promise<PreparedAction> {
  const name = downloadFilename(action.downloadFilename, scope);
  if (!name.ok) return name;
  const url = expandTemplate(action.url, scope);
  // The template as written names the upstream in logs: the expanded URL may carry ${env:...} secrets.
  const shown = action.url.source;
  const failure = (internal: string): PreparedAction => ({
    ok: false,
    failure: { status: 502, detail: 'the upstream server of this endpoint did not answer successfully', internal },
  });
  // Loaded on first use (see loadGot): most applications never answer from a URL.
  const { default: got } = await loadGot();
  let stream;
  try {
    stream = got.stream(url, {
      throwHttpErrors: false,
      retry: { limit: 0 },
      timeout: { request: context.upstreamTimeoutMs },
    });
  } catch (error) {
    return failure(`GET ${shown}: ${reason(error)}`);
  }
  try {
    const response = await new Promise<{ statusCode: number; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
      stream.once('response', resolve);
      stream.once('error', reject);
    });
    if (response.statusCode < 200 || response.statusCode > 299) {
      stream.destroy();
      return failure(`GET ${shown} answered with status ${response.statusCode}`);
    }
    // Later errors (the upstream breaks off mid-body) are the server adapter's to handle.
    stream.on('error', () => {});
    const contentType = response.headers['content-type'];
    return {
      ok: true,
      response: {
        kind: 'stream',
        status: errorStatus ?? response.statusCode,
        contentType: typeof contentType === 'string' ? contentType : 'application/octet-stream',
        stream,
        downloadFilename: name.name,
      },
    };
  } catch (error) {
    stream.destroy();
    return failure(`GET ${shown}: ${reason(error)}`);
  }
}

export function reason(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code) ? `${code} ${error.message}` : error.message;
  }
  return String(error);
}
