// <success> and <error>: at most one action each, compiled to a tagged union.

import path from 'node:path';
import type { BodyAction, ErrorResponse, SuccessAction, SuccessResponse } from './ast.js';
import type { Position } from '../position.js';
import type { Template } from '../template/types.js';
import { compileJsonBody, compileXmlBody } from './bodies.js';
import { lintDestination } from './destinations.js';
import { downloadFilenameRefusal } from './download-filename.js';
import { CONDITION_ATTRIBUTES, compileCondition, conditionUsesIntermediate } from './conditions.js';
import { readElement, requireAttribute, resolveInside, single, type CompileContext, type ElementShape, type ReadElement } from './context.js';
import { contentTypeFor } from '../content-types.js';
import { compileTemplate, type NameScope } from './templates.js';
import { textOf, type XmlElement } from './xml.js';
import { exact } from './retained.js';

const ACTIONS = ['redirect-to', 'response-from-static', 'response-from-url', 'forward-to-endpoint', 'response-body'] as const;
const UNSUPPORTED_ACTIONS = ['response-transformation', 'ooxml-parameter-expansion'];
const RESPONSE_CHILDREN = [...ACTIONS, 'redirect-prefix-whitelist-entry', 'after', 'input-intermediate-value'];
const SUCCESS_SHAPE: ElementShape = { attributes: CONDITION_ATTRIBUTES, children: RESPONSE_CHILDREN };
const ERROR_SHAPE: ElementShape = { attributes: [], children: RESPONSE_CHILDREN };

export interface ResponseScopes {
  /** Parameters in scope plus the success's own inputs. */
  readonly success: (inputs: ReadonlySet<string>) => NameScope;
  readonly error: NameScope;
}

export interface SuccessDraft {
  readonly response: Omit<SuccessResponse, 'deferred'>;
  /** <after task-id> elements, to check against the endpoint's tasks. */
  readonly afterRefs: readonly { id: string; position: Position }[];
  readonly inputRefs: readonly { name: string; position: Position }[];
}

export function compileSuccess(ctx: CompileContext, element: XmlElement, scopes: ResponseScopes): SuccessDraft | null {
  const read = readElement(ctx, element, SUCCESS_SHAPE);
  const afterRefs: { id: string; position: Position }[] = [];
  for (const a of read.children('after')) {
    const r = readElement(ctx, a, { attributes: ['task-id'], children: [] });
    const id = requireAttribute(ctx, r, 'task-id');
    if (id) afterRefs.push({ id: id.value, position: a.position });
  }
  const inputRefs: { name: string; position: Position }[] = [];
  for (const i of read.children('input-intermediate-value')) {
    const r = readElement(ctx, i, { attributes: ['name'], children: [] });
    const name = requireAttribute(ctx, r, 'name');
    if (name) inputRefs.push({ name: name.value, position: i.position });
  }
  const inputs = new Set(inputRefs.map((i) => i.name));
  const scope = scopes.success(inputs);
  const condition = compileCondition(ctx, read, scope);
  // The response is chosen before any task runs (its tasks depend on which one applies).
  if (condition && conditionUsesIntermediate(condition)) ctx.diagnostics.report('success-condition-uses-intermediate-value', read.attr('if')!.position);
  const action = compileAction(ctx, read, scope, false);
  if (condition === undefined || action === undefined || (condition && conditionUsesIntermediate(condition))) return null;
  return {
    response: { condition, action, after: exact(afterRefs.map((a) => a.id)), inputs: exact([...inputs]), position: element.position },
    afterRefs,
    inputRefs,
  };
}

export function compileError(ctx: CompileContext, element: XmlElement | undefined, scopes: ResponseScopes): ErrorResponse | null {
  if (!element) return { action: { kind: 'empty' }, position: null };
  const read = readElement(ctx, element, ERROR_SHAPE);
  for (const name of ['after', 'input-intermediate-value', 'forward-to-endpoint']) {
    for (const c of read.children(name)) ctx.diagnostics.report('not-allowed-in-error', c.position, `<${name}>`);
  }
  const action = compileAction(ctx, read, scopes.error, true);
  if (action === undefined) return null;
  if (action.kind === 'forward') return null;
  return { action, position: element.position };
}

/** undefined when the action is invalid (reported). */
function compileAction(ctx: CompileContext, read: ReadElement, scope: NameScope, inError: boolean): SuccessAction | undefined {
  const actions = read.known.filter((c) => (ACTIONS as readonly string[]).includes(c.name));
  const unsupported = read.unsupported.filter((c) => UNSUPPORTED_ACTIONS.includes(c.name));
  const all = [...actions, ...unsupported].sort((a, b) => a.position.line - b.position.line || a.position.column - b.position.column);
  if (all.length > 1) {
    ctx.diagnostics.report('multiple-actions', all[1]!.position, read.element.name, all[0]!.name, all[1]!.name);
    return undefined;
  }
  const whitelist = read.children('redirect-prefix-whitelist-entry');
  const element = actions[0];
  if (!element) {
    if (unsupported.length > 0) return undefined;
    if (whitelist.length > 0) ctx.diagnostics.report('missing-element', whitelist[0]!.position, 'redirect-to', read.element.name);
    return { kind: 'empty' };
  }
  if (element.name !== 'redirect-to') {
    for (const w of whitelist) ctx.diagnostics.report('unknown-element', w.position, w.name, read.element.name, undefined);
  }
  switch (element.name) {
    case 'redirect-to':
      return compileRedirect(ctx, element, whitelist, scope);
    case 'response-from-static':
      return compileStaticResponse(ctx, element, scope, inError);
    case 'response-from-url':
      return compileUrlResponse(ctx, element, scope, inError);
    case 'forward-to-endpoint':
      return compileForward(ctx, element, scope, inError);
    case 'response-body':
      return compileResponseBody(ctx, element, scope);
  }
  return undefined;
}

function compileRedirect(ctx: CompileContext, element: XmlElement, whitelist: readonly XmlElement[], scope: NameScope): SuccessAction | undefined {
  const url = compileTextTemplate(ctx, element, 'url', scope);
  const entries: string[] = [];
  for (const w of whitelist) {
    const wr = readElement(ctx, w, { attributes: [], children: [], text: true });
    const value = textOf(wr.element).trim();
    if (value.includes('${')) ctx.diagnostics.report('placeholder-not-allowed', w.position, '<redirect-prefix-whitelist-entry>');
    else if (value === '')
      ctx.diagnostics.report('invalid-value', w.position, '<redirect-prefix-whitelist-entry>', value, 'a URL prefix such as https://www.example.com/');
    else entries.push(value);
  }
  if (!url) return undefined;
  // A whitelist already decides where a redirect may go.
  if (entries.length === 0) lintDestination(ctx, url, 'redirect', element.position);
  // Copied to its exact size (see compileParts).
  return { kind: 'redirect', url, whitelist: exact(entries), position: element.position };
}

function compileStaticResponse(ctx: CompileContext, element: XmlElement, scope: NameScope, inError: boolean): SuccessAction | undefined {
  const r = readElement(ctx, element, { attributes: ['filename', 'download-filename'], children: [] });
  const filename = requireAttribute(ctx, r, 'filename');
  const download = r.attr('download-filename');
  if (download && inError) ctx.diagnostics.report('not-allowed-in-error', download.position, 'download-filename');
  let absolutePath: string | null = null;
  if (filename) {
    if (filename.value.includes('${')) ctx.diagnostics.report('placeholder-not-allowed', filename.position, 'filename of <response-from-static>');
    else absolutePath = resolveInside(ctx, ctx.staticDirectory, ctx.staticLabel, filename.value, filename.position);
  }
  const downloadFilename = download && !inError ? compileDownloadFilename(ctx, download.value, scope, download.position) : null;
  if (!filename || absolutePath === null || downloadFilename === undefined || (download && inError)) return undefined;
  return {
    kind: 'static',
    filename: filename.value,
    absolutePath,
    contentType: contentTypeFor(path.extname(filename.value)),
    downloadFilename,
    position: element.position,
  };
}

function compileUrlResponse(ctx: CompileContext, element: XmlElement, scope: NameScope, inError: boolean): SuccessAction | undefined {
  const r = readElement(ctx, element, { attributes: ['download-filename'], children: ['url'] });
  const download = r.attr('download-filename');
  if (download && inError) ctx.diagnostics.report('not-allowed-in-error', download.position, 'download-filename');
  const urlElement = single(ctx, r, 'url');
  if (!urlElement) ctx.diagnostics.report('missing-element', element.position, 'url', element.name);
  const url = urlElement ? compileTextTemplate(ctx, urlElement, 'url', scope) : null;
  const downloadFilename = download && !inError ? compileDownloadFilename(ctx, download.value, scope, download.position) : null;
  if (!url || downloadFilename === undefined || (download && inError)) return undefined;
  lintDestination(ctx, url, 'response-from-url', urlElement!.position);
  return { kind: 'url', url, downloadFilename, position: element.position };
}

function compileForward(ctx: CompileContext, element: XmlElement, scope: NameScope, inError: boolean): SuccessAction | undefined {
  const r = readElement(ctx, element, { attributes: ['endpoint-name'], children: ['input-parameter'] });
  const target = requireAttribute(ctx, r, 'endpoint-name');
  const inputs = r.children('input-parameter');
  const inputParameters = [];
  let ok = target !== undefined;
  for (const input of inputs) {
    const ir = readElement(ctx, input, { attributes: ['name'], children: [], text: true });
    const name = requireAttribute(ctx, ir, 'name');
    const value = compileTemplate(ctx, textOf(input).trim(), 'none', scope, input.position);
    if (!name || !value) ok = false;
    else inputParameters.push({ name: name.value, value, position: input.position });
  }
  if (!ok || inError) return undefined;
  return { kind: 'forward', endpoint: target!.value, inputParameters: inputs.length > 0 ? inputParameters : null, position: element.position };
}

function compileResponseBody(ctx: CompileContext, element: XmlElement, scope: NameScope): BodyAction | undefined {
  const r = readElement(ctx, element, { attributes: ['status', 'content-type'], children: [], text: true });
  const statusAttr = r.attr('status');
  let status: number | null = null;
  if (statusAttr) {
    const n = Number(statusAttr.value);
    if (!/^\d{3}$/.test(statusAttr.value) || n < 200 || n > 599) {
      ctx.diagnostics.report('invalid-value', statusAttr.position, 'status', statusAttr.value, 'an HTTP status from 200 to 599');
      return undefined;
    }
    status = n;
  }
  const contentType = r.attr('content-type')?.value.trim() || 'text/plain; charset=utf-8';
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  const text = textOf(element);
  let body: Template | null;
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) body = compileJsonBody(ctx, text, scope, element.position);
  else if (mediaType === 'application/xml' || mediaType === 'text/xml' || mediaType.endsWith('+xml')) body = compileXmlBody(ctx, element, text, scope);
  else body = compileTemplate(ctx, text, mediaType === 'text/html' ? 'html' : 'none', scope, element.position);
  if (!body) return undefined;
  return { kind: 'body', status, contentType, body, position: element.position };
}

/** undefined after reporting; a literal name is checked now, a template when expanded. */
function compileDownloadFilename(ctx: CompileContext, value: string, scope: NameScope, at: Position): Template | undefined {
  if (!value.includes('${') && downloadFilenameRefusal(value) !== null) {
    ctx.diagnostics.report('invalid-download-filename', at, value);
    return undefined;
  }
  return compileTemplate(ctx, value, 'none', scope, at) ?? undefined;
}

export function compileTextTemplate(ctx: CompileContext, element: XmlElement, escaping: Template['escaping'], scope: NameScope): Template | null {
  const r = readElement(ctx, element, { attributes: [], children: [], text: true });
  const text = textOf(r.element).trim();
  // An empty URL is a URL left out: say so now rather than fail every request.
  if (escaping === 'url' && text === '') {
    ctx.diagnostics.report('invalid-value', element.position, `<${element.name}>`, '', 'a URL such as https://api.example.com/items');
    return null;
  }
  return compileTemplate(ctx, text, escaping, scope, element.position);
}
