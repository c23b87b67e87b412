// JSON and XML bodies are parsed at compile time; the template keeps their structure as
// literal text and leaves only the placeholder values to escape per request.

import type { Position, Template, TemplatePart } from './ast.js';
import type { CompileContext } from './context.js';
import { compileParts, pushLiteral, type NameScope } from './templates.js';
import { escapeXml } from '../template/escape.js';
import { parseXml, type XmlElement, type XmlText } from './xml.js';

/** A JSON text whose string values may hold placeholders. */
export function compileJsonBody(ctx: CompileContext, source: string, scope: NameScope, at: Position): Template | null {
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (error) {
    // A placeholder outside a string makes the text invalid JSON; say so rather than "unexpected token".
    try {
      JSON.parse(source.replace(/\$\{[^}]*\}/g, '0'));
      ctx.diagnostics.report('json-placeholder-position', at, 'outside a string');
    } catch {
      ctx.diagnostics.report('invalid-json', at, jsonErrorMessage(error, source));
    }
    return null;
  }
  const parts: TemplatePart[] = [];
  let ok = true;
  const write = (v: unknown): void => {
    if (typeof v === 'string') {
      pushLiteral(parts, '"');
      const inner = compileParts(ctx, v, 'json', scope, at);
      if (inner === null) ok = false;
      else for (const p of inner) p.kind === 'literal' ? pushLiteral(parts, p.text) : parts.push(p);
      pushLiteral(parts, '"');
    } else if (Array.isArray(v)) {
      pushLiteral(parts, '[');
      v.forEach((item, i) => {
        if (i > 0) pushLiteral(parts, ',');
        write(item);
      });
      pushLiteral(parts, ']');
    } else if (v !== null && typeof v === 'object') {
      pushLiteral(parts, '{');
      Object.entries(v).forEach(([key, item], i) => {
        if (key.includes('${')) {
          ctx.diagnostics.report('json-placeholder-position', at, `in the object key "${key}"`);
          ok = false;
        }
        if (i > 0) pushLiteral(parts, ',');
        pushLiteral(parts, JSON.stringify(key) + ':');
        write(item);
      });
      pushLiteral(parts, '}');
    } else pushLiteral(parts, JSON.stringify(v));
  };
  write(value);
  return ok ? { source, escaping: 'json', parts, position: at } : null;
}

function jsonErrorMessage(error: unknown, source: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const m = /at position (\d+)/.exec(message);
  if (!m) return message;
  const offset = Number(m[1]);
  const before = source.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `${message.replace(/ in JSON at position \d+.*$/, '')} (line ${line}, column ${column} of the body)`;
}

/** One XML element, given inline as child elements or as text (CDATA). */
export function compileXmlBody(ctx: CompileContext, container: XmlElement, text: string, scope: NameScope): Template | null {
  const elements = container.children.filter((c): c is XmlElement => c.kind === 'element');
  let root: XmlElement;
  if (elements.length > 0) {
    if (elements.length > 1 || text.trim() !== '') {
      ctx.diagnostics.report('invalid-xml-body', container.position, `<${container.name}> must hold exactly one root element`);
      return null;
    }
    root = elements[0]!;
  } else {
    // A single CDATA section (the usual form) is parsed alone, so positions point into the file.
    const texts = container.children.filter((c): c is XmlText => c.kind === 'text');
    const sections = texts.filter((c) => c.cdata);
    const single = sections.length === 1 && sections[0]!.position && texts.every((c) => c.cdata || c.text.trim() === '') ? sections[0]! : null;
    const base = single?.position ?? container.position;
    const parsed = parseXml(single ? single.text : text, container.position.file, { line: base.line, column: base.column });
    if (!parsed.ok) {
      ctx.diagnostics.report('invalid-xml-body', { file: container.position.file, line: parsed.line, column: parsed.column }, parsed.message);
      return null;
    }
    root = parsed.root;
  }
  const parts: TemplatePart[] = [];
  let ok = true;
  const add = (source: string, at: Position) => {
    const inner = compileParts(ctx, source, 'xml', scope, at);
    if (inner === null) ok = false;
    else for (const p of inner) p.kind === 'literal' ? pushLiteral(parts, p.text) : parts.push(p);
  };
  const write = (el: XmlElement): void => {
    pushLiteral(parts, `<${el.name}`);
    for (const a of el.attributes) {
      pushLiteral(parts, ` ${a.name}="`);
      add(a.value, a.position);
      pushLiteral(parts, '"');
    }
    if (el.children.length === 0) {
      pushLiteral(parts, '/>');
      return;
    }
    pushLiteral(parts, '>');
    for (const child of el.children) {
      if (child.kind === 'text') add(child.text, el.position);
      else write(child);
    }
    pushLiteral(parts, `</${el.name}>`);
  };
  write(root);
  const source = elements.length > 0 ? serialisePlain(root) : text;
  return ok ? { source, escaping: 'xml', parts, position: container.position } : null;
}

function serialisePlain(el: XmlElement): string {
  const attrs = el.attributes.map((a) => ` ${a.name}="${escapeXml(a.value)}"`).join('');
  if (el.children.length === 0) return `<${el.name}${attrs}/>`;
  const inner = el.children.map((c) => (c.kind === 'text' ? escapeXml(c.text) : serialisePlain(c))).join('');
  return `<${el.name}${attrs}>${inner}</${el.name}>`;
}
