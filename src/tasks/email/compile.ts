// The Email elements of a <task>: addresses, subject, bodies, attachments.

import { readFileSync } from 'node:fs';
import type { Task } from '../../compiler/ast.js';
import { taskWith } from '../../compiler/tasks.js';
import { compileCondition, CONDITION_ATTRIBUTES } from '../../compiler/conditions.js';
import { readElement, requireAttribute, resolveInside, single, type CompileContext, type ElementShape, type ReadElement } from '../../compiler/context.js';
import { lintRecipient } from '../../compiler/destinations.js';
import { compileTextTemplate } from '../../compiler/responses.js';
import { compileTemplate, type NameScope } from '../../compiler/templates.js';
import { textOf, type XmlElement } from '../../compiler/xml.js';
import type { Template } from '../../template/types.js';
import type { Position } from '../../position.js';
import type { EmailAttachment, EmailBody, EmailTask } from './types.js';
import { exact } from '../../compiler/retained.js';

export const EMAIL_CHILDREN = ['from', 'to', 'cc', 'bcc', 'reply-to', 'subject', 'body', 'attachment-static', 'attachments-from-request-file-uploads'];
const ATTACHMENT_STATIC_SHAPE: ElementShape = { attributes: ['filename', ...CONDITION_ATTRIBUTES], children: [] };
const ATTACHMENT_UPLOADS_SHAPE: ElementShape = { attributes: CONDITION_ATTRIBUTES, children: [] };

/** The Email elements of a <task>; `base` is what every kind shares. */
export function compileEmail(ctx: CompileContext, read: ReadElement, scope: NameScope, base: Task, element: XmlElement): EmailTask | null {
  let ok = true;
  const address = (el: XmlElement): Template | null => {
    const t = compileTextTemplate(ctx, el, 'header', scope);
    if (!t) ok = false;
    return t;
  };
  const required = (name: string): XmlElement | undefined => {
    const el = single(ctx, read, name);
    if (!el) {
      ctx.diagnostics.report('missing-element', element.position, name, 'task');
      ok = false;
    }
    return el;
  };
  const fromElement = required('from');
  const from = fromElement ? address(fromElement) : null;
  const toElements = read.children('to');
  if (toElements.length === 0) {
    ctx.diagnostics.report('missing-element', element.position, 'to', 'task');
    ok = false;
  }
  const recipient = (el: XmlElement): Template | null => {
    const t = address(el);
    if (t) lintRecipient(ctx, t, scope, el.position);
    return t;
  };
  const to = toElements.map(recipient).filter((t): t is Template => t !== null);
  const cc = read.children('cc').map(recipient).filter((t): t is Template => t !== null);
  const bcc = read.children('bcc').map(recipient).filter((t): t is Template => t !== null);
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
    ctx.diagnostics.report('email-without-body', element.position);
  }

  // With where each stands: they go into the message in the order the author wrote them.
  const attachments: { attachment: EmailAttachment; at: Position }[] = [];
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
    else attachments.push({ attachment: { kind: 'static', filename: filename.value, absolutePath, condition }, at: a.position });
  }
  for (const a of read.children('attachments-from-request-file-uploads')) {
    const r = readElement(ctx, a, ATTACHMENT_UPLOADS_SHAPE);
    const condition = compileCondition(ctx, r, scope);
    if (condition === undefined) ok = false;
    else attachments.push({ attachment: { kind: 'uploads', condition }, at: a.position });
  }
  // Attachments go into the message in the order the author wrote them, whatever their kind.
  attachments.sort((a, b) => a.at.line - b.at.line || a.at.column - b.at.column);
  if (!ok || !from || !subject) return null;
  return taskWith(base, {
    kind: 'email' as const,
    from,
    // Lists of the AST are copied to their exact size (see compileParts).
    to: exact(to),
    cc: exact(cc),
    bcc: exact(bcc),
    replyTo,
    subject,
    bodies: exact(bodies),
    attachments: exact(attachments.map((a) => a.attachment)),
  });
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
  return { contentType, template, inlineImages: exact(inlineImages) };
}

