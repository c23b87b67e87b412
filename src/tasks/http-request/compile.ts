// The HttpRequest elements of a <task>: url, method, parameters, headers, basic auth, one body.

import type { Task } from '../../compiler/ast.js';
import { taskWith } from '../../compiler/tasks.js';
import { compileJsonBody, compileXmlBody } from '../../compiler/bodies.js';
import { readElement, requireAttribute, single, type CompileContext, type ElementShape, type ReadElement } from '../../compiler/context.js';
import { lintDestination } from '../../compiler/destinations.js';
import { compileTextTemplate } from '../../compiler/responses.js';
import { compileTemplate, type NameScope } from '../../compiler/templates.js';
import { textOf, type XmlElement } from '../../compiler/xml.js';
import type { Position } from '../../position.js';
import type { NamedTemplate, Template } from '../../template/types.js';
import type { HttpMethod, HttpRequestTask, RequestBody } from './types.js';
import { exact } from '../../compiler/retained.js';
import { compileSign, SIGN_ELEMENT, type RelaySigning } from './sign.js';

export const HTTP_REQUEST_CHILDREN = [
  'url',
  'method',
  'get-parameter',
  'post-parameter',
  'request-header',
  'basic-access-authentication',
  'json-body',
  'xml-body',
  'forward-request-body',
  SIGN_ELEMENT,
];
const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
const NAMED_VALUE_SHAPE: ElementShape = { attributes: ['name'], children: [], text: true };

/** The HttpRequest elements of a <task>; `base` is what every kind shares. */
export function compileHttpRequest(ctx: CompileContext, read: ReadElement, scope: NameScope, base: Task, element: XmlElement): HttpRequestTask | null {
  let ok = true;
  const urlElement = single(ctx, read, 'url');
  if (!urlElement) {
    ctx.diagnostics.report('missing-element', element.position, 'url', 'task');
    ok = false;
  }
  const url = urlElement ? compileTextTemplate(ctx, urlElement, 'url', scope) : null;
  if (urlElement && !url) ok = false;
  if (url) lintDestination(ctx, url, 'task', urlElement!.position);

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

  const headerPositions: Position[] = [];
  const named = (name: string, escaping: Template['escaping']): NamedTemplate[] => {
    const out: NamedTemplate[] = [];
    // Only the compile reads where each one stands (an invalid header name).
    const positions = name === 'request-header' ? headerPositions : [];
    for (const el of read.children(name)) {
      const n = requireAttribute(ctx, readElement(ctx, el, NAMED_VALUE_SHAPE), 'name');
      const position = el.position;
      const value = compileTemplate(ctx, textOf(el).trim(), escaping, scope, position);
      if (!n || !value) ok = false;
      else if (n.value.includes('${')) {
        ctx.diagnostics.report('placeholder-not-allowed', n.position, `the name of <${name}>`);
        ok = false;
      } else {
        out.push({ name: n.value, value });
        positions.push(position);
      }
    }
    return out;
  };
  const getParameters = named('get-parameter', 'form');
  const postParameters = named('post-parameter', 'form');
  const headers = named('request-header', 'header');
  for (const [k, h] of headers.entries()) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(h.name)) {
      ctx.diagnostics.report('invalid-value', headerPositions[k]!, 'a header name', h.name, 'a token such as X-Api-Key');
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
  const forwardElement = single(ctx, read, 'forward-request-body');
  if (forwardElement) {
    readElement(ctx, forwardElement, { attributes: [], children: [] });
    bodies.push({ kind: 'forward', position: forwardElement.position, body: { kind: 'forward' } });
  }
  if (postParameters.length > 0 || read.children('post-parameter').length > 0) {
    const first = read.children('post-parameter')[0]!;
    bodies.push({ kind: 'form', position: first.position, body: { kind: 'form', parameters: postParameters } });
  }
  bodies.sort((a, b) => a.position.line - b.position.line || a.position.column - b.position.column);
  if (bodies.length > 1) {
    const names = { json: '<json-body>', xml: '<xml-body>', form: '<post-parameter>', forward: '<forward-request-body/>' };
    ctx.diagnostics.report(
      'conflicting-body',
      bodies[1]!.position,
      `A task may have one body kind, but this one has ${names[bodies[0]!.kind]} and ${names[bodies[1]!.kind]}: keep one`,
    );
    ok = false;
  }
  if (bodies.some((b) => b.body === null)) ok = false;
  if (method === 'GET' && bodies.length > 0) {
    ctx.diagnostics.report('conflicting-body', bodies[0]!.position, 'A GET request cannot have a body: remove the body or use <method name="POST"/>');
    ok = false;
  }

  let sign: RelaySigning | null = null;
  const signElement = single(ctx, read, SIGN_ELEMENT);
  if (signElement) {
    const compiled = compileSign(ctx, signElement);
    if (compiled === undefined) ok = false;
    else sign = compiled;
  }

  if (!ok || !url) return null;
  return taskWith(base, {
    kind: 'http-request' as const,
    url,
    method: method ?? (bodies.length > 0 ? 'POST' : 'GET'),
    // Lists of the AST are copied to their exact size (see compileParts).
    getParameters: exact(getParameters),
    headers: exact(headers),
    basicAuth,
    body: bodies[0]?.body ?? null,
    sign,
  });
}
