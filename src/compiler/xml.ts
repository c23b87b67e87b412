// fast-xml-parser with positions: every element and attribute keeps its 1-based line and
// column, so every diagnostic can point at the exact place in the file.

import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { Position } from './ast.js';

export interface XmlAttribute {
  readonly name: string;
  readonly value: string;
  readonly position: Position;
}

export interface XmlText {
  readonly kind: 'text';
  readonly text: string;
  readonly cdata: boolean;
}

export interface XmlElement {
  readonly kind: 'element';
  readonly name: string;
  readonly attributes: readonly XmlAttribute[];
  readonly children: readonly XmlNode[];
  readonly position: Position;
}

export type XmlNode = XmlElement | XmlText;

export type XmlParseResult =
  | { readonly ok: true; readonly root: XmlElement }
  | { readonly ok: false; readonly message: string; readonly line: number; readonly column: number; readonly code: XmlProblemCode };

export type XmlProblemCode = 'xml-malformed' | 'xml-doctype' | 'xml-too-deep' | 'file-empty';

/** Deeper than any real configuration; keeps hostile input from exhausting the stack. */
export const MAX_DEPTH = 200;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  allowBooleanAttributes: false,
  captureMetaData: true,
  cdataPropName: '#cdata',
  commentPropName: '#comment',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  processEntities: true,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
});
const META = XMLParser.getMetaDataSymbol();

type RawNode = Record<string, unknown> & { ':@'?: Record<string, string> };

/** Maps offsets in the original text (CRLF kept) to 1-based line and column. */
export class LineIndex {
  private readonly starts: number[] = [0];
  constructor(text: string) {
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.starts.push(i + 1);
  }
  at(offset: number): { line: number; column: number } {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - this.starts[lo]! + 1 };
  }
}

/**
 * Parses one XML document. `file` names it in positions; `base` shifts positions when the text
 * is a fragment of another file (an inline body).
 */
export function parseXml(text: string, file: string, base?: { line: number; column: number }): XmlParseResult {
  if (text.trim() === '') return { ok: false, code: 'file-empty', message: 'the file is empty: it needs a root element', line: 1, column: 1 };
  const at = (line: number, column: number) =>
    base ? { line: base.line + line - 1, column: line === 1 ? base.column + column - 1 : column } : { line, column };

  const doctype = /<!DOCTYPE/i.exec(text);
  if (doctype) {
    const p = new LineIndex(text).at(doctype.index);
    // Entity declarations can expand exponentially; configurations never need a DOCTYPE.
    return { ok: false, code: 'xml-doctype', message: 'a <!DOCTYPE> declaration is not allowed: remove it (entity declarations are not supported)', ...at(p.line, p.column) };
  }
  const depth = maxDepthOffset(text);
  if (depth !== null) {
    const p = new LineIndex(text).at(depth);
    return { ok: false, code: 'xml-too-deep', message: `elements are nested more than ${MAX_DEPTH} levels deep`, ...at(p.line, p.column) };
  }
  const valid = XMLValidator.validate(text, { allowBooleanAttributes: false });
  if (valid !== true) {
    const unclosed = /^Invalid '(\[.*\])' found/s.exec(valid.err.msg);
    if (unclosed) {
      // The validator reports a truncated document as a list of open tags at 1:1; point at the end instead.
      let open: string[] = [];
      try {
        open = JSON.parse(unclosed[1]!) as string[];
      } catch {
        /* keep the generic wording */
      }
      const end = new LineIndex(text).at(text.length);
      const innermost = open[open.length - 1] ?? 'an element';
      return { ok: false, code: 'xml-malformed', message: `malformed XML: the file ends while <${innermost}> is still open (truncated?); close it with </${innermost}>`, ...at(end.line, end.column) };
    }
    return { ok: false, code: 'xml-malformed', message: `malformed XML: ${printable(valid.err.msg.replace(/\.+$/, ''))}`, ...at(valid.err.line, valid.err.col) };
  }
  let raw: RawNode[];
  try {
    raw = parser.parse(text) as RawNode[];
  } catch (error) {
    return { ok: false, code: 'xml-malformed', message: `malformed XML: ${(error as Error).message}`, ...at(1, 1) };
  }
  const lines = new LineIndex(text);
  const position = (offset: number): Position => {
    const p = lines.at(offset);
    return { file, ...at(p.line, p.column) };
  };
  const roots = raw.filter((n) => elementName(n) !== null);
  if (roots.length !== 1) {
    return { ok: false, code: 'xml-malformed', message: 'malformed XML: the document must have exactly one root element', ...at(1, 1) };
  }
  return { ok: true, root: convert(roots[0]!, text, position) };
}

function elementName(node: RawNode): string | null {
  for (const key of Object.keys(node)) {
    if (key === ':@' || key === '#text' || key === '#cdata' || key === '#comment') continue;
    return key;
  }
  return null;
}

function convert(node: RawNode, text: string, position: (offset: number) => Position): XmlElement {
  const name = elementName(node)!;
  const start = (node[META as unknown as string] as { startIndex?: number } | undefined)?.startIndex ?? 0;
  const attrs = node[':@'] ?? {};
  const attributePositions = locateAttributes(text, start);
  const attributes: XmlAttribute[] = Object.entries(attrs).map(([attrName, value]) => ({
    name: attrName,
    value: String(value),
    position: position(attributePositions.get(attrName) ?? start),
  }));
  const children: XmlNode[] = [];
  for (const child of (node[name] as RawNode[] | undefined) ?? []) {
    if ('#text' in child) children.push({ kind: 'text', text: String(child['#text']), cdata: false });
    else if ('#cdata' in child) {
      const inner = child['#cdata'] as RawNode[];
      children.push({ kind: 'text', text: inner.map((t) => String(t['#text'] ?? '')).join(''), cdata: true });
    } else if ('#comment' in child) continue;
    else if (elementName(child) !== null) children.push(convert(child, text, position));
  }
  return { kind: 'element', name, attributes, children, position: position(start) };
}

/** Offsets of each attribute name inside the start tag that begins at `start` (`<`). */
function locateAttributes(text: string, start: number): Map<string, number> {
  const found = new Map<string, number>();
  const nameEnd = /[\s/>]/g;
  nameEnd.lastIndex = start + 1;
  const afterName = nameEnd.exec(text);
  if (!afterName) return found;
  // Quoted values may hold '>', so walk attribute by attribute until the tag closes.
  const re = /\s*([^\s=/>]+)\s*=\s*(?:"[^"]*"|'[^']*')/y;
  re.lastIndex = afterName.index;
  for (let m = re.exec(text); m; m = re.exec(text)) found.set(m[1]!, m.index + m[0].indexOf(m[1]!));
  return found;
}

/** Offset where nesting first exceeds MAX_DEPTH, or null. A cheap scan before the real parse. */
function maxDepthOffset(text: string): number | null {
  let depth = 0;
  const re = /<(\/?)([A-Za-z_][^\s/>]*)[^>]*?(\/?)>|<!\[CDATA\[[\s\S]*?\]\]>|<!--[\s\S]*?-->/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[2] === undefined) continue;
    if (m[1] === '/') depth--;
    else if (m[3] !== '/') {
      depth++;
      if (depth > MAX_DEPTH) return m.index;
    }
  }
  return null;
}

/** Concatenated text and CDATA of an element's direct children. */
export function textOf(element: XmlElement): string {
  let out = '';
  for (const child of element.children) if (child.kind === 'text') out += child.text;
  return out;
}

export function childElements(element: XmlElement): XmlElement[] {
  const out: XmlElement[] = [];
  for (const child of element.children) if (child.kind === 'element') out.push(child);
  return out;
}

export function attribute(element: XmlElement, name: string): XmlAttribute | undefined {
  return element.attributes.find((a) => a.name === name);
}

/** Shows control characters of a binary file as escapes in messages. */
function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
