// <task>: HttpRequest and Email, in short and endpoints.task.* names.

import { JSONPath } from 'jsonpath-plus';
import { createRequire } from 'node:module';
import type { EmailAttachment, EmailBody, EmailTask, HttpMethod, HttpRequestTask, OutputIntermediateValue, RequestBody } from './ast.js';
import type { NamedTemplate, Template } from '../template/types.js';
import type { Position } from '../position.js';
import { compileJsonBody, compileXmlBody } from './bodies.js';
import { CONDITION_ATTRIBUTES, compileCondition } from './conditions.js';
import {
  parseBooleanAttribute,
  parseDuration,
  readElement,
  requireAttribute,
  resolveInside,
  single,
  type CompileContext,
  type ElementShape,
  type ReadElement,
} from './context.js';
import { compileTextTemplate } from './responses.js';
import { compileTemplate, type NameScope } from './templates.js';
import { readFileSync } from 'node:fs';
import { textOf, type XmlElement } from './xml.js';

export type TaskClass = 'http-request' | 'email';
const CLASSES: ReadonlyMap<string, TaskClass> = new Map([
  ['HttpRequest', 'http-request'],
  ['endpoints.task.HttpRequestTask', 'http-request'],
  ['Email', 'email'],
  ['endpoints.task.EmailTask', 'email'],
]);
const UNSUPPORTED_CLASSES = new Set(['CreateShortLinkToEndpointTask', 'RequestLogExpressionCaptureTask']);
const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
const DEFAULT_TIMEOUT_MS = 30_000;

const TASK_ATTRIBUTES = ['class', 'id', ...CONDITION_ATTRIBUTES, 'ignore-if-error', 'timeout', 'retries'];
const COMMON_CHILDREN = ['after', 'input-intermediate-value', 'output-intermediate-value'];
const HTTP_CHILDREN = ['url', 'method', 'get-parameter', 'post-parameter', 'request-header', 'basic-access-authentication', 'json-body', 'xml-body'];
const EMAIL_CHILDREN = ['from', 'to', 'cc', 'bcc', 'reply-to', 'subject', 'body', 'attachment-static', 'attachments-from-request-file-uploads'];
const HTTP_TASK_SHAPE: ElementShape = { attributes: TASK_ATTRIBUTES, children: [...COMMON_CHILDREN, ...HTTP_CHILDREN] };
const EMAIL_TASK_SHAPE: ElementShape = { attributes: TASK_ATTRIBUTES, children: [...COMMON_CHILDREN, ...EMAIL_CHILDREN] };
const NAMED_VALUE_SHAPE: ElementShape = { attributes: ['name'], children: [], text: true };
const AFTER_SHAPE: ElementShape = { attributes: ['task-id'], children: [] };
const INPUT_SHAPE: ElementShape = { attributes: ['name'], children: [] };
const ATTACHMENT_STATIC_SHAPE: ElementShape = { attributes: ['filename', ...CONDITION_ATTRIBUTES], children: [] };
const ATTACHMENT_UPLOADS_SHAPE: ElementShape = { attributes: CONDITION_ATTRIBUTES, children: [] };

/** What the first pass learns of a task: enough to resolve names across the endpoint. */
export interface TaskHeader {
  readonly element: XmlElement;
  readonly read: ReadElement;
  readonly kind: TaskClass;
  readonly id: string;
  readonly explicitId: boolean;
  readonly idPosition: Position;
  readonly after: readonly { id: string; position: Position }[];
  readonly inputs: readonly { name: string; position: Position }[];
  readonly outputs: readonly { name: string; position: Position; element: XmlElement }[];
}

/** First pass: class, id, after, inputs, outputs. null when the class is unknown or unsupported (reported; nothing inside is checked). */
export function readTaskHeader(ctx: CompileContext, element: XmlElement, index: number): TaskHeader | null {
  const classAttr = element.attributes.find((a) => a.name === 'class');
  if (!classAttr) {
    ctx.diagnostics.report('missing-attribute', element.position, 'class', 'task');
    return null;
  }
  const kind = CLASSES.get(classAttr.value);
  if (!kind) {
    const bare = classAttr.value.replace(/^endpoints\.task\./, '');
    if (UNSUPPORTED_CLASSES.has(bare)) ctx.diagnostics.report('unsupported-feature', classAttr.position, `The task class ${classAttr.value}`);
    else ctx.diagnostics.report('unknown-task-class', classAttr.position, classAttr.value, ctx.suggestions.closest(classAttr.value, CLASSES.keys()));
    return null;
  }
  const read = readElement(ctx, element, kind === 'http-request' ? HTTP_TASK_SHAPE : EMAIL_TASK_SHAPE);
  const idAttr = read.attr('id');
  if (idAttr && !/^[A-Za-z0-9_.-]+$/.test(idAttr.value)) {
    ctx.diagnostics.report('invalid-value', idAttr.position, 'the task id', idAttr.value, 'letters, digits, "_", "." and "-"');
  }
  // Loops rather than flatMap: this runs for every task of the application.
  const after: { id: string; position: Position }[] = [];
  for (const a of read.children('after')) {
    const id = requireAttribute(ctx, readElement(ctx, a, AFTER_SHAPE), 'task-id');
    if (id) after.push({ id: id.value, position: a.position });
  }
  const inputs: { name: string; position: Position }[] = [];
  for (const i of read.children('input-intermediate-value')) {
    const name = requireAttribute(ctx, readElement(ctx, i, INPUT_SHAPE), 'name');
    if (name) inputs.push({ name: name.value, position: i.position });
  }
  const outputs: { name: string; position: Position; element: XmlElement }[] = [];
  for (const o of read.children('output-intermediate-value')) {
    const name = o.attributes.find((a) => a.name === 'name');
    if (name) outputs.push({ name: name.value, position: o.position, element: o });
    else ctx.diagnostics.report('missing-attribute', o.position, 'name', o.name);
  }
  return {
    element,
    read,
    kind,
    id: idAttr?.value ?? `task-${index + 1}`,
    explicitId: idAttr !== undefined,
    idPosition: idAttr?.position ?? element.position,
    after,
    inputs,
    outputs,
  };
}

/** Second pass: the whole task, with names resolved in `scope`. null when invalid (reported). */
export function compileTask(ctx: CompileContext, header: TaskHeader, scope: NameScope): HttpRequestTask | EmailTask | null {
  const { read } = header;
  const condition = compileCondition(ctx, read, scope);
  const ignoreIfError = parseBooleanAttribute(ctx, read.attr('ignore-if-error'), 'task') ?? false;
  let ok = condition !== undefined;

  let timeoutMs = DEFAULT_TIMEOUT_MS;
  const timeoutAttr = read.attr('timeout');
  if (timeoutAttr) {
    const parsed = parseDuration(timeoutAttr.value);
    if (parsed === null) {
      ctx.diagnostics.report('invalid-value', timeoutAttr.position, 'timeout', timeoutAttr.value, 'a duration such as 500ms, 10s or 2m');
      ok = false;
    } else timeoutMs = parsed;
  }
  let retries = 0;
  const retriesAttr = read.attr('retries');
  if (retriesAttr) {
    if (!/^\d{1,2}$/.test(retriesAttr.value)) {
      ctx.diagnostics.report('invalid-value', retriesAttr.position, 'retries', retriesAttr.value, 'a whole number from 0 to 99');
      ok = false;
    } else retries = Number(retriesAttr.value);
  }
  if (header.outputs.length > 0) {
    if (header.kind === 'email') ctx.diagnostics.report('email-output', header.outputs[0]!.position);
    else if (condition) ctx.diagnostics.report('output-on-optional-task', condition.position, 'a condition');
    else if (ignoreIfError) ctx.diagnostics.report('output-on-optional-task', read.attr('ignore-if-error')!.position, 'ignore-if-error="true"');
  }
  const base = {
    id: header.id,
    explicitId: header.explicitId,
    className: read.attr('class')!.value,
    condition: condition ?? null,
    ignoreIfError,
    timeoutMs,
    retries,
    after: header.after.map((a) => a.id),
    inputs: header.inputs.map((i) => i.name),
    position: header.element.position,
  };
  const task = header.kind === 'http-request' ? compileHttpRequest(ctx, header, scope, base) : compileEmail(ctx, header, scope, base);
  return ok ? task : null;
}

type TaskBaseFields = Omit<HttpRequestTask, 'kind' | 'url' | 'method' | 'getParameters' | 'headers' | 'basicAuth' | 'body' | 'outputs'>;

function compileHttpRequest(ctx: CompileContext, header: TaskHeader, scope: NameScope, base: TaskBaseFields): HttpRequestTask | null {
  const { read } = header;
  let ok = true;
  const urlElement = single(ctx, read, 'url');
  if (!urlElement) {
    ctx.diagnostics.report('missing-element', header.element.position, 'url', 'task');
    ok = false;
  }
  const url = urlElement ? compileTextTemplate(ctx, urlElement, 'url', scope) : null;
  if (urlElement && !url) ok = false;

  let method: HttpMethod | null = null;
  const methodElement = single(ctx, read, 'method');
  if (methodElement) {
    const r = readElement(ctx, methodElement, { attributes: ['name'], children: [] });
    const name = requireAttribute(ctx, r, 'name');
    if (name) {
      const upper = name.value.toUpperCase() as HttpMethod;
      if (!METHODS.includes(upper)) {
        ctx.diagnostics.report('invalid-value', name.position, 'the method', name.value, METHODS.join(', '));
        ok = false;
      } else method = upper;
    } else ok = false;
  }

  const named = (name: string, escaping: Template['escaping']): NamedTemplate[] => {
    const out: NamedTemplate[] = [];
    for (const el of read.children(name)) {
      const n = requireAttribute(ctx, readElement(ctx, el, NAMED_VALUE_SHAPE), 'name');
      const position = el.position;
      const value = compileTemplate(ctx, textOf(el).trim(), escaping, scope, position);
      if (!n || !value) ok = false;
      else if (n.value.includes('${')) {
        ctx.diagnostics.report('placeholder-not-allowed', n.position, `the name of <${name}>`);
        ok = false;
      } else out.push({ name: n.value, value, position });
    }
    return out;
  };
  const getParameters = named('get-parameter', 'form');
  const postParameters = named('post-parameter', 'form');
  const headers = named('request-header', 'header');
  for (const h of headers) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(h.name)) {
      ctx.diagnostics.report('invalid-value', h.position, 'a header name', h.name, 'a token such as X-Api-Key');
      ok = false;
    }
  }

  let basicAuth: HttpRequestTask['basicAuth'] = null;
  const auth = single(ctx, read, 'basic-access-authentication');
  if (auth) {
    const r = readElement(ctx, auth, { attributes: ['username', 'password'], children: [] });
    const user = requireAttribute(ctx, r, 'username');
    const pass = requireAttribute(ctx, r, 'password');
    const username = user ? compileTemplate(ctx, user.value, 'header', scope, user.position) : null;
    const password = pass ? compileTemplate(ctx, pass.value, 'header', scope, pass.position) : null;
    if (username && password) basicAuth = { username, password };
    else ok = false;
  }

  const bodies: { kind: RequestBody['kind']; position: Position; body: RequestBody | null }[] = [];
  const jsonElement = single(ctx, read, 'json-body');
  if (jsonElement) {
    const r = readElement(ctx, jsonElement, { attributes: [], children: [], text: true });
    const template = compileJsonBody(ctx, textOf(r.element), scope, jsonElement.position);
    bodies.push({ kind: 'json', position: jsonElement.position, body: template && { kind: 'json', template } });
  }
  const xmlElement = single(ctx, read, 'xml-body');
  if (xmlElement) {
    // Its children are the body itself, whatever their names; its own attributes are checked.
    const names = xmlElement.children.flatMap((c) => (c.kind === 'element' ? [c.name] : []));
    readElement(ctx, xmlElement, { attributes: [], children: names, text: true });
    const template = compileXmlBody(ctx, xmlElement, textOf(xmlElement), scope);
    bodies.push({ kind: 'xml', position: xmlElement.position, body: template && { kind: 'xml', template } });
  }
  if (postParameters.length > 0 || read.children('post-parameter').length > 0) {
    const first = read.children('post-parameter')[0]!;
    bodies.push({ kind: 'form', position: first.position, body: { kind: 'form', parameters: postParameters } });
  }
  bodies.sort((a, b) => a.position.line - b.position.line || a.position.column - b.position.column);
  if (bodies.length > 1) {
    const names = { json: '<json-body>', xml: '<xml-body>', form: '<post-parameter>' };
    ctx.diagnostics.report('conflicting-body', bodies[1]!.position, `A task may have one body kind, but this one has ${names[bodies[0]!.kind]} and ${names[bodies[1]!.kind]}: keep one`);
    ok = false;
  }
  if (bodies.some((b) => b.body === null)) ok = false;
  if (method === 'GET' && bodies.length > 0) {
    ctx.diagnostics.report('conflicting-body', bodies[0]!.position, 'A GET request cannot have a body: remove the body or use <method name="POST"/>');
    ok = false;
  }

  const outputs: OutputIntermediateValue[] = [];
  for (const o of header.outputs) {
    const output = compileOutput(ctx, o.element);
    if (output) outputs.push(output);
    else ok = false;
  }
  if (!ok || !url) return null;
  // Fields written out rather than spread from base (same order): spreading is slow, per task.
  return {
    id: base.id,
    explicitId: base.explicitId,
    className: base.className,
    condition: base.condition,
    ignoreIfError: base.ignoreIfError,
    timeoutMs: base.timeoutMs,
    retries: base.retries,
    after: base.after,
    inputs: base.inputs,
    position: base.position,
    kind: 'http-request',
    url,
    method: method ?? (bodies.length > 0 ? 'POST' : 'GET'),
    // Lists of the AST are copied to their exact size (see compileParts).
    getParameters: getParameters.slice(),
    headers: headers.slice(),
    basicAuth,
    body: bodies[0]?.body ?? null,
    outputs: outputs.slice(),
  };
}

// Loaded on the first <output-intermediate-value xpath>: most applications read JSON answers,
// and loading the XPath library is a noticeable share of validate's start-up.
let xpathModule: { parse(expression: string): unknown } | null = null;
function xpathParser(): { parse(expression: string): unknown } {
  xpathModule ??= createRequire(import.meta.url)('xpath') as { parse(expression: string): unknown };
  return xpathModule;
}

function compileOutput(ctx: CompileContext, element: XmlElement): OutputIntermediateValue | null {
  const r = readElement(ctx, element, { attributes: ['name', 'jsonpath', 'xpath', 'regex'], children: [] });
  const name = r.attr('name')!;
  const jsonpath = r.attr('jsonpath');
  const xp = r.attr('xpath');
  if ((jsonpath ? 1 : 0) + (xp ? 1 : 0) !== 1) {
    ctx.diagnostics.report('invalid-output', element.position, 'give exactly one of "jsonpath" or "xpath"');
    return null;
  }
  let ok = true;
  if (jsonpath) {
    const problem = memo(jsonPathProblems, jsonpath.value, jsonPathProblem);
    if (problem) {
      ctx.diagnostics.report('invalid-jsonpath', jsonpath.position, jsonpath.value, problem);
      ok = false;
    }
  }
  if (xp) {
    try {
      xpathParser().parse(xp.value);
    } catch (error) {
      ctx.diagnostics.report('invalid-xpath', xp.position, xp.value, (error as Error).message);
      ok = false;
    }
  }
  let regex: string | null = null;
  const re = r.attr('regex');
  if (re) {
    regex = `^(?:${re.value})$`;
    const problem = memo(regexProblems, regex, regexProblem);
    if (problem !== null) {
      ctx.diagnostics.report('invalid-regex', re.position, re.value, problem);
      ok = false;
    }
  }
  if (!ok) return null;
  return {
    name: name.value,
    selector: jsonpath ? { kind: 'jsonpath', path: jsonpath.value } : { kind: 'xpath', path: xp!.value },
    regex,
    position: element.position,
  };
}

// Thousands of tasks repeat the same few JSONPaths and regexes, and checking one runs
// jsonpath-plus or the regex compiler: each distinct text is checked once per process (the
// verdict depends on the text alone). Bounded, since a server reloads configurations.
const jsonPathProblems = new Map<string, string | null>();
const regexProblems = new Map<string, string | null>();
const MEMO_LIMIT = 10_000;

function memo(cache: Map<string, string | null>, text: string, check: (text: string) => string | null): string | null {
  let verdict = cache.get(text);
  if (verdict === undefined) {
    verdict = check(text);
    if (cache.size >= MEMO_LIMIT) cache.clear();
    cache.set(text, verdict);
  }
  return verdict;
}

function regexProblem(regex: string): string | null {
  try {
    new RegExp(regex);
    return null;
  } catch (error) {
    return (error as Error).message.replace(/^Invalid regular expression: /, '');
  }
}

function jsonPathProblem(path: string): string | null {
  if (!path.startsWith('$')) return 'it must start with "$"';
  let depth = 0;
  let quote: string | null = null;
  for (const c of path) {
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') {
      if (--depth < 0) return `an unmatched "${c}"`;
    } else if (depth === 0 && /\s/.test(c)) return 'a space outside brackets (quote the name: $[\'a b\'])';
  }
  if (quote) return 'a quote is not closed';
  if (depth !== 0) return 'a bracket is not closed';
  // jsonpath-plus quietly drops an empty last step, so "$.a." would select "$.a".
  if (/(^|[^.])\.$/.test(path)) return 'it ends with "." where a name is expected';
  if (path.endsWith('..')) return 'it ends with ".." where a name is expected';
  try {
    JSONPath({ path, json: {}, wrap: true, eval: 'safe' });
  } catch (error) {
    return (error as Error).message;
  }
  // Filters are parsed only when they run: run each once on one empty object, so their syntax
  // errors show now. Errors of evaluation ("jsonPath: ...") depend on data and are not syntax.
  for (const step of JSONPath.toPathArray(path)) {
    if (!step.startsWith('?(') || !step.endsWith(')')) continue;
    try {
      JSONPath({ path: `$[${step}]`, json: [{}], wrap: true, eval: 'safe' });
    } catch (error) {
      const message = (error as Error).message;
      if (!message.startsWith('jsonPath:')) return `the filter ${step} is not valid: ${message}`;
    }
  }
  return null;
}

function compileEmail(ctx: CompileContext, header: TaskHeader, scope: NameScope, base: TaskBaseFields): EmailTask | null {
  const { read } = header;
  let ok = true;
  const address = (el: XmlElement): Template | null => {
    const t = compileTextTemplate(ctx, el, 'header', scope);
    if (!t) ok = false;
    return t;
  };
  const required = (name: string): XmlElement | undefined => {
    const el = single(ctx, read, name);
    if (!el) {
      ctx.diagnostics.report('missing-element', header.element.position, name, 'task');
      ok = false;
    }
    return el;
  };
  const fromElement = required('from');
  const from = fromElement ? address(fromElement) : null;
  const toElements = read.children('to');
  if (toElements.length === 0) {
    ctx.diagnostics.report('missing-element', header.element.position, 'to', 'task');
    ok = false;
  }
  const to = toElements.map(address).filter((t): t is Template => t !== null);
  const cc = read.children('cc').map(address).filter((t): t is Template => t !== null);
  const bcc = read.children('bcc').map(address).filter((t): t is Template => t !== null);
  const replyToElement = single(ctx, read, 'reply-to');
  const replyTo = replyToElement ? address(replyToElement) : null;
  const subjectElement = required('subject');
  const subject = subjectElement ? address(subjectElement) : null;

  const bodies: EmailBody[] = [];
  for (const b of read.children('body')) {
    const body = compileEmailBody(ctx, b, scope);
    if (body) bodies.push(body);
    else ok = false;
  }
  if (read.children('body').length === 0 && !read.unsupported.some((u) => u.name === 'body-transformation')) {
    ctx.diagnostics.report('email-without-body', header.element.position);
  }

  const attachments: EmailAttachment[] = [];
  for (const a of read.children('attachment-static')) {
    const r = readElement(ctx, a, ATTACHMENT_STATIC_SHAPE);
    const filename = requireAttribute(ctx, r, 'filename');
    const condition = compileCondition(ctx, r, scope);
    if (!filename || condition === undefined) {
      ok = false;
      continue;
    }
    if (filename.value.includes('${')) {
      ctx.diagnostics.report('placeholder-not-allowed', filename.position, 'filename of <attachment-static>');
      ok = false;
      continue;
    }
    const absolutePath = resolveInside(ctx, ctx.staticDirectory, ctx.staticLabel, filename.value, filename.position);
    if (absolutePath === null) ok = false;
    else attachments.push({ kind: 'static', filename: filename.value, absolutePath, condition, position: a.position });
  }
  for (const a of read.children('attachments-from-request-file-uploads')) {
    const r = readElement(ctx, a, ATTACHMENT_UPLOADS_SHAPE);
    const condition = compileCondition(ctx, r, scope);
    if (condition === undefined) ok = false;
    else attachments.push({ kind: 'uploads', condition, position: a.position });
  }
  // Attachments go into the message in the order the author wrote them, whatever their kind.
  attachments.sort((a, b) => a.position.line - b.position.line || a.position.column - b.position.column);
  if (!ok || !from || !subject) return null;
  return {
    id: base.id,
    explicitId: base.explicitId,
    className: base.className,
    condition: base.condition,
    ignoreIfError: base.ignoreIfError,
    timeoutMs: base.timeoutMs,
    retries: base.retries,
    after: base.after,
    inputs: base.inputs,
    position: base.position,
    kind: 'email',
    from,
    // Lists of the AST are copied to their exact size (see compileParts).
    to: to.slice(),
    cc: cc.slice(),
    bcc: bcc.slice(),
    replyTo,
    subject,
    bodies: bodies.slice(),
    attachments: attachments.slice(),
  };
}

const CID = /\bsrc\s*=\s*["']cid:([^"']+)["']/gi;

function compileEmailBody(ctx: CompileContext, element: XmlElement, scope: NameScope): EmailBody | null {
  const r = readElement(ctx, element, { attributes: ['content-type', 'src'], children: [], text: true });
  const typeAttr = r.attr('content-type');
  const contentType = (typeAttr?.value.trim().toLowerCase() ?? 'text/plain') as EmailBody['contentType'];
  if (contentType !== 'text/plain' && contentType !== 'text/html') {
    ctx.diagnostics.report('invalid-value', typeAttr!.position, 'content-type', typeAttr!.value, '"text/plain" or "text/html"');
    return null;
  }
  let source = textOf(element);
  let at = element.position;
  const src = r.attr('src');
  if (src) {
    if (source.trim() !== '') {
      ctx.diagnostics.report('conflicting-body', src.position, 'A <body> takes its template either from src or from its text, not both: keep one');
      return null;
    }
    // Read once at compile time, so its name cannot depend on the request.
    if (src.value.includes('${')) {
      ctx.diagnostics.report('placeholder-not-allowed', src.position, 'src of <body>');
      return null;
    }
    const file = resolveInside(ctx, ctx.directory, 'the application directory', src.value, src.position);
    if (file === null) return null;
    try {
      source = readFileSync(file, 'utf8');
    } catch (error) {
      ctx.diagnostics.report('file-not-found', src.position, src.value, 'the application directory');
      return null;
    }
    at = { file: ctx.displayPath(src.value), line: 1, column: 1 };
  } else source = source.replace(/^\s*\n/, '').replace(/\n\s*$/, '\n');
  const template = compileTemplate(ctx, source, contentType === 'text/html' ? 'html' : 'none', scope, at);
  if (!template) return null;
  const inlineImages: { cid: string; absolutePath: string }[] = [];
  if (contentType === 'text/html') {
    for (const p of template.parts) {
      if (p.kind !== 'literal') continue;
      for (const m of p.text.matchAll(CID)) {
        const cid = m[1]!;
        if (inlineImages.some((i) => i.cid === cid)) continue;
        const absolutePath = resolveInside(ctx, ctx.staticDirectory, ctx.staticLabel, cid, src ? at : element.position);
        if (absolutePath === null) return null;
        inlineImages.push({ cid, absolutePath });
      }
    }
  }
  return { contentType, template, inlineImages, position: element.position };
}

