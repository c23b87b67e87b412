// JSON and XML bodies are parsed at compile time; the template keeps their structure as
// literal text and leaves only the placeholder values to escape per request.

import type { Position } from '../position.js';
import type { Template, TemplatePart } from '../template/types.js';
import type { CompileContext } from './context.js';
import { compileParts, type NameScope } from './templates.js';
import type { SharedTemplates } from './shared-templates.js';
import { escapeJsonString, escapeXml } from '../template/escape.js';
import { parseXml, type XmlElement, type XmlText } from './xml.js';

/** Deeper than any real body, as MAX_DEPTH is for XML. */
const MAX_JSON_DEPTH = 200;

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
  const out = new PartsBuilder(ctx.shared);
  let ok = true;
  let tooDeep = false;
  const write = (v: unknown, depth: number): void => {
    if (depth > MAX_JSON_DEPTH) {
      // Written by recursion: a body nested thousands deep would overflow the stack.
      if (!tooDeep) ctx.diagnostics.report('invalid-json', at, `arrays and objects are nested more than ${MAX_JSON_DEPTH} levels deep`);
      tooDeep = true;
      ok = false;
      return;
    }
    if (typeof v === 'string') {
      // Most values hold no placeholder: written whole, as one piece of literal text.
      if (!v.includes('${')) {
        out.literal('"' + escapeJsonString(v) + '"');
        return;
      }
      out.literal('"');
      const inner = compileParts(ctx, v, 'json', scope, at);
      if (inner === null) ok = false;
      else out.all(inner);
      out.literal('"');
    } else if (Array.isArray(v)) {
      out.literal('[');
      for (let i = 0; i < v.length; i++) {
        if (i > 0) out.literal(',');
        write(v[i], depth + 1);
      }
      out.literal(']');
    } else if (v !== null && typeof v === 'object') {
      out.literal('{');
      let i = 0;
      for (const key in v) {
        if (!Object.prototype.hasOwnProperty.call(v, key)) continue;
        if (key.includes('${')) {
          ctx.diagnostics.report('json-placeholder-position', at, `in the object key "${key}"`);
          ok = false;
        }
        out.literal((i++ > 0 ? ',' : '') + JSON.stringify(key) + ':');
        write((v as Record<string, unknown>)[key], depth + 1);
      }
      out.literal('}');
    } else out.literal(JSON.stringify(v));
  };
  write(value, 0);
  return ok ? { source, escaping: 'json', parts: out.finish() } : null;
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
  const out = new PartsBuilder(ctx.shared);
  let ok = true;
  const add = (source: string, at: Position) => {
    const inner = compileParts(ctx, source, 'xml', scope, at);
    if (inner === null) ok = false;
    else out.all(inner);
  };
  const write = (el: XmlElement): void => {
    out.literal(`<${el.name}`);
    for (const a of el.attributes) {
      out.literal(` ${a.name}="`);
      add(a.value, a.position);
      out.literal('"');
    }
    if (el.children.length === 0) {
      out.literal('/>');
      return;
    }
    out.literal('>');
    for (const child of el.children) {
      if (child.kind === 'text') add(child.text, el.position);
      else write(child);
    }
    out.literal(`</${el.name}>`);
  };
  write(root);
  const source = elements.length > 0 ? serialisePlain(root) : text;
  return ok ? { source, escaping: 'xml', parts: out.finish() } : null;
}

function serialisePlain(el: XmlElement): string {
  const attrs = el.attributes.map((a) => ` ${a.name}="${escapeXml(a.value)}"`).join('');
  if (el.children.length === 0) return `<${el.name}${attrs}/>`;
  const inner = el.children.map((c) => (c.kind === 'text' ? escapeXml(c.text) : serialisePlain(c))).join('');
  return `<${el.name}${attrs}>${inner}</${el.name}>`;
}

/**
 * Template parts with adjacent literal text merged into one flat string. Bodies are written a
 * token at a time; concatenating as they come would keep a chain of partial strings (and a
 * replaced part object per token) for every body of the application.
 */
class PartsBuilder {
  constructor(private readonly shared: SharedTemplates) {}
  private readonly parts: TemplatePart[] = [];
  private text: string[] = [];

  literal(text: string): void {
    if (text !== '') this.text.push(text);
  }

  all(parts: readonly TemplatePart[]): void {
    for (const p of parts) {
      if (p.kind === 'literal') this.literal(p.text);
      else {
        this.flush();
        this.parts.push(p);
      }
    }
  }

  finish(): TemplatePart[] {
    this.flush();
    // Of the exact size (see compileParts).
    return this.parts.slice();
  }

  private flush(): void {
    if (this.text.length === 0) return;
    this.parts.push(this.shared.part(this.text.length === 1 ? this.text[0]! : this.text.join('')));
    // A new list rather than length = 0, which takes the engine's slow path.
    this.text = [];
  }
}
