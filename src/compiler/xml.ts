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
  /** Where a CDATA section's content starts (after `<![CDATA[`), for an element without child elements: bodies parsed from it report positions in the file. */
  readonly position?: Position;
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

export type XmlProblemCode = 'xml-malformed' | 'xml-doctype' | 'xml-too-deep' | 'file-empty' | 'xml-encoding';

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
  // Not HTML's named entities, but this option is also what turns on character references
  // (&#233; &#x41;), which every XML document may use: an object (supported at run time,
  // typed as boolean only) defines just the five XML names.
  htmlEntities: { amp: '&', apos: "'", gt: '>', lt: '<', quot: '"' } as unknown as boolean,
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

  // XML 1.0 (section 2.2) allows no C0 control character but tab, CR and LF, not even escaped:
  // a NUL in a value is a broken or binary file, not something to pass on to a mail or a URL.
  const control = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.exec(text);
  if (control) {
    const p = new LineIndex(text).at(control.index);
    const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    return { ok: false, code: 'xml-malformed', message: `malformed XML: the character U+${code} is not allowed in XML (a binary file?)`, ...at(p.line, p.column) };
  }
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
    // "Start tag expected" (no root element at all) comes without a column: the problem is
    // where the content ends without one (after the last non-blank character). Any other position without a column: its line's start.
    const where: { line: number; column: number } =
      typeof valid.err.col === 'number' && typeof valid.err.line === 'number'
        ? { line: valid.err.line, column: valid.err.col }
        : /start tag expected/i.test(valid.err.msg) || typeof valid.err.line !== 'number'
          ? new LineIndex(text).at(text.trimEnd().length)
          : { line: valid.err.line, column: 1 };
    return { ok: false, code: 'xml-malformed', message: `malformed XML: ${printable(valid.err.msg.replace(/\.+$/, ''))}`, ...at(where.line, where.column) };
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
  const rawChildren = (node[name] as RawNode[] | undefined) ?? [];
  // Without child elements, the element's CDATA sections are the next ones in the text, in order.
  const flat = rawChildren.every((c) => '#text' in c || '#cdata' in c || '#comment' in c);
  let cursor = start;
  for (const child of rawChildren) {
    if ('#text' in child) children.push({ kind: 'text', text: String(child['#text']), cdata: false });
    else if ('#cdata' in child) {
      const inner = child['#cdata'] as RawNode[];
      const content = inner.map((t) => String(t['#text'] ?? '')).join('');
      const open = flat ? text.indexOf('<![CDATA[', cursor) : -1;
      if (open >= 0) cursor = open + 9 + content.length;
      children.push({ kind: 'text', text: content, cdata: true, ...(open >= 0 ? { position: position(open + 9) } : {}) });
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

export type XmlDecodeResult =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly code: 'xml-encoding'; readonly message: string; readonly line: number; readonly column: number };

/**
 * The text of an XML file's bytes, as XML 1.0 reads them: UTF-16 by its byte order mark, the
 * encoding named by the `<?xml ... encoding="..."?>` declaration, else UTF-8, strictly. Decoding
 * invalid UTF-8 leniently would turn a Latin-1 file's "é" into U+FFFD and serve it silently.
 */
export function decodeXml(bytes: Uint8Array): XmlDecodeResult {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { ok: true, text: new TextDecoder('utf-16le').decode(bytes) };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { ok: true, text: new TextDecoder('utf-16be').decode(bytes) };
  // The declaration is ASCII in every encoding that TextDecoder knows apart from UTF-16.
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 256));
  const declared = /^(?:\u00ef\u00bb\u00bf)?<\?xml\s[^>]*?\bencoding\s*=\s*["']([^"']*)["']/.exec(head);
  const label = declared?.[1]?.trim().toLowerCase();
  if (label !== undefined && label !== 'utf-8' && label !== 'utf8') {
    let decoder: TextDecoder;
    try {
      decoder = new TextDecoder(label);
    } catch {
      const column = declared!.index + declared![0].lastIndexOf(declared![1]!) + 1;
      return { ok: false, code: 'xml-encoding', message: `the encoding "${declared![1]}" named in the XML declaration is not supported: save the file as UTF-8`, line: 1, column };
    }
    return { ok: true, text: decoder.decode(bytes) };
  }
  try {
    return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    const offset = firstInvalidUtf8(bytes);
    const before = new TextDecoder('utf-8').decode(bytes.subarray(0, offset));
    const lineStart = before.lastIndexOf('\n') + 1;
    const line = (before.match(/\n/g)?.length ?? 0) + 1;
    const byte = (bytes[offset] ?? 0).toString(16).toUpperCase().padStart(2, '0');
    return {
      ok: false,
      code: 'xml-encoding',
      message: `the file is not valid UTF-8 (byte 0x${byte}): save it as UTF-8, or name its encoding in <?xml version="1.0" encoding="..."?>`,
      line,
      column: before.length - lineStart + 1,
    };
  }
}

/** Offset of the first byte that does not start or continue a well-formed UTF-8 sequence. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (b < 0x80) length = 1;
    else if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) low = 0xa0;
      if (b === 0xed) high = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) low = 0x90;
      if (b === 0xf4) high = 0x8f;
    } else return i;
    if (i + length > bytes.length) return i;
    for (let k = 1; k < length; k++) {
      const c = bytes[i + k]!;
      if (k === 1 ? c < low || c > high : (c & 0xc0) !== 0x80) return i;
    }
    i += length;
  }
  return bytes.length;
}
