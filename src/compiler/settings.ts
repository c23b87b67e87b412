// email-sending-configuration.xml and security.xml: optional files beside endpoints.xml.

import type { EmailSettings, SecuritySettings } from './ast.js';
import type { NamedTemplate, Template } from '../template/types.js';
import { readElement, requireAttribute, single, UNSUPPORTED_INSTEAD, type CompileContext } from './context.js';
import { compileTemplate, ENV_ONLY_SCOPE } from './templates.js';
import { textOf, type XmlElement } from './xml.js';

export function compileEmailSettings(ctx: CompileContext, root: XmlElement): EmailSettings | null {
  const read = readElement(ctx, root, {
    attributes: [],
    children: ['server', 'port', 'username', 'password', 'header', 'mx-address'],
  });
  // --smtp-url replaces the connection (server, port, username, password), not the headers: the
  // variables of a replaced setting need not be set where the service runs (docs/language.md).
  const connectionCtx: CompileContext = ctx.smtpUrlGiven ? { ...ctx, envUnused: true } : ctx;
  const value = (name: string): Template | null | undefined => {
    const el = single(ctx, read, name);
    if (!el) return undefined;
    const r = readElement(ctx, el, { attributes: [], children: [], text: true });
    return compileTemplate(connectionCtx, textOf(r.element).trim(), 'header', ENV_ONLY_SCOPE, el.position);
  };
  for (const mx of read.children('mx-address'))
    ctx.diagnostics.report('unsupported-feature', mx.position, '<mx-address> (delivery straight to MX hosts)', UNSUPPORTED_INSTEAD['mx-address']!);
  let ok = true;
  const server = value('server');
  if (server === undefined) {
    ctx.diagnostics.report('missing-element', root.position, 'server', root.name);
    ok = false;
  }
  let port: number | null = null;
  const portElement = single(ctx, read, 'port');
  if (portElement) {
    readElement(ctx, portElement, { attributes: [], children: [], text: true });
    const text = textOf(portElement).trim();
    const n = Number(text);
    if (!/^\d+$/.test(text) || n < 1 || n > 65535) {
      ctx.diagnostics.report('invalid-value', portElement.position, '<port>', text, 'a port number from 1 to 65535');
      ok = false;
    } else port = n;
  }
  const username = value('username');
  const password = value('password');
  if ((username === undefined) !== (password === undefined)) {
    const present = single(ctx, read, username !== undefined ? 'username' : 'password')!;
    ctx.diagnostics.report('missing-element', present.position, username !== undefined ? 'password' : 'username', root.name);
    ok = false;
  }
  const headers: NamedTemplate[] = [];
  for (const h of read.children('header')) {
    const r = readElement(ctx, h, { attributes: ['name'], children: [], text: true });
    const name = requireAttribute(ctx, r, 'name');
    const template = compileTemplate(ctx, textOf(h).trim(), 'header', ENV_ONLY_SCOPE, h.position);
    if (name && template) headers.push({ name: name.value, value: template });
    else ok = false;
  }
  if (!ok || !server || username === null || password === null || read.children('mx-address').length > 0) return null;
  return { server, port, username: username ?? null, password: password ?? null, headers, position: root.position };
}

export function compileSecurity(ctx: CompileContext, root: XmlElement): SecuritySettings | null {
  const read = readElement(ctx, root, { attributes: [], children: ['secret-key'] });
  const keys = read.children('secret-key');
  if (keys.length === 0) {
    ctx.diagnostics.report('missing-element', root.position, 'secret-key', root.name);
    return null;
  }
  const secretKeys: Template[] = [];
  for (const k of keys) {
    const r = readElement(ctx, k, { attributes: [], children: [], text: true });
    const t = compileTemplate(ctx, textOf(r.element).trim(), 'none', ENV_ONLY_SCOPE, k.position);
    if (!t) continue;
    if (t.parts.length === 0) ctx.diagnostics.report('invalid-value', k.position, '<secret-key>', '', 'a non-empty secret');
    else secretKeys.push(t);
  }
  return secretKeys.length === keys.length ? { secretKeys, position: root.position } : null;
}
