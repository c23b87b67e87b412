// A small XML parser with positions: every element and attribute keeps its 1-based line and
// column, so every diagnostic can point at the exact place in the file. One pass builds the tree
// (an XmlDocument, see xml-tree.ts) and checks well-formedness (configurations of tens of
// megabytes are validated in seconds); the first problem in document order is the one reported.
// Hand-written rather than a library, and shaped for speed (one table lookup per character,
// interned names): docs/performance.md, "XML parser". It replaced fast-xml-parser and builds
// the same tree for every well-formed input, which is why some comments below name it.

import { XmlDocument, type XmlAttribute, type XmlElement } from './xml-tree.js';
import { asRead, internalized, Interner } from './retained.js';

export { textOf, type XmlAttribute, type XmlElement, type XmlNode, type XmlText } from './xml-tree.js';

export type XmlParseResult =
  | { readonly ok: true; readonly root: XmlElement }
  | { readonly ok: false; readonly message: string; readonly line: number; readonly column: number; readonly code: XmlProblemCode };

export type XmlProblemCode = 'xml-malformed' | 'xml-doctype' | 'xml-too-deep' | 'file-empty' | 'xml-encoding';

/** Deeper than any real configuration; keeps hostile input from exhausting the stack. */
export const MAX_DEPTH = 200;

/**
 * Maps offsets in the original text (line ends kept) to 1-based line and column. As XML 1.0
 * (section 2.11) reads line ends: LF, CRLF and a lone CR each end a line.
 */
export class LineIndex {
  private readonly starts: number[] = [0];
  constructor(text: string) {
    for (const m of text.matchAll(/\r\n?|\n/g)) this.starts.push(m.index + m[0].length);
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
 * is a fragment of another file (an inline body). `kept`: whether what is read from the tree may
 * be kept after it (see internalized); validate lets every value go and skips that cost.
 */
export function parseXml(text: string, file: string, base?: { line: number; column: number }, kept = true): XmlParseResult {
  if (text.trim() === '') return { ok: false, code: 'file-empty', message: 'the file is empty: it needs a root element', line: 1, column: 1 };
  const parser = new Parser(text, file, base, kept);
  try {
    return { ok: true, root: parser.document() };
  } catch (error) {
    if (!(error instanceof XmlProblem)) throw error;
    // Problems are rare: their offset is turned into a line and column only here.
    const p = new LineIndex(text).at(error.offset);
    const line = base ? base.line + p.line - 1 : p.line;
    const column = base && p.line === 1 ? base.column + p.column - 1 : p.column;
    return { ok: false, code: error.code, message: error.message, line, column };
  }
}

/** Thrown inside the parser to unwind to parseXml with the first problem of the document. */
class XmlProblem {
  constructor(
    readonly code: XmlProblemCode,
    readonly message: string,
    readonly offset: number,
  ) {}
}

const LT = 0x3c;
const GT = 0x3e;
const AMP = 0x26;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const EQUALS = 0x3d;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const HYPHEN = 0x2d;
const RBRACKET = 0x5d;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const SEMICOLON = 0x3b;
const HASH = 0x23;

// ASCII name characters (the XML Name production, as fast-xml-parser accepted it before):
// 1 may start a name, 2 may continue one.
const ASCII_NAME = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[:A-Za-z_]/.test(ch)) ASCII_NAME[c] = 3;
  else if (/[-.0-9]/.test(ch)) ASCII_NAME[c] = 2;
}

function isNameStartCode(c: number): boolean {
  if (c < 128) return (ASCII_NAME[c]! & 1) !== 0;
  return (
    (c >= 0xc0 && c <= 0xd6) ||
    (c >= 0xd8 && c <= 0xf6) ||
    (c >= 0xf8 && c <= 0x2ff) ||
    (c >= 0x370 && c <= 0x37d) ||
    (c >= 0x37f && c <= 0x1fff) ||
    (c >= 0x200c && c <= 0x200d) ||
    (c >= 0x2070 && c <= 0x218f) ||
    (c >= 0x2c00 && c <= 0x2fef) ||
    (c >= 0x3001 && c <= 0xd7ff) ||
    (c >= 0xf900 && c <= 0xfdcf) ||
    (c >= 0xfdf0 && c <= 0xfffd)
  );
}

function isNameCode(c: number): boolean {
  if (c < 128) return ASCII_NAME[c]! !== 0;
  return isNameStartCode(c) || c === 0xb7 || (c >= 0x300 && c <= 0x36f) || (c >= 0x203f && c <= 0x2040);
}

/**
 * The length in code units (1 or 2) of the name character at `i`, or 0 when there is none;
 * `start` asks for a character that may start a name. Characters U+10000 to U+EFFFF, written as
 * a surrogate pair, are name characters (XML 1.0 fifth edition, production [4]).
 */
function nameCharAt(s: string, i: number, start: boolean): number {
  const c = s.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff) return (start ? isNameStartCode(c) : isNameCode(c)) ? 1 : 0;
  const low = s.charCodeAt(i + 1);
  if (!(low >= 0xdc00 && low <= 0xdfff)) return 0;
  return c <= 0xdb7f ? 2 : 0; // up to U+EFFFF: high surrogates D800 to DB7F
}

/** The end of the name characters from `i` on. */
function nameEnd(s: string, i: number, n: number): number {
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c < 128) {
      if (ASCII_NAME[c] === 0) break;
      i++;
    } else {
      const k = nameCharAt(s, i, false);
      if (k === 0) break;
      i += k;
    }
  }
  return i;
}

/** Characters XML 1.0 (section 2.2) forbids even as references: C0 controls but tab, CR and LF; U+FFFE and U+FFFF. */
function isForbiddenCode(c: number): boolean {
  return (c < SPACE && c !== TAB && c !== LF && c !== CR) || c === 0xfffe || c === 0xffff;
}

function isLegalCodePoint(cp: number): boolean {
  return cp === TAB || cp === LF || cp === CR || (cp >= SPACE && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

/**
 * Characters that end a plain run of character data or of an attribute value: "<", "&", the
 * quotes (for values), every C0 control (tab, LF and CR are handled, the others refused),
 * U+FFFE and U+FFFF. Every other character is looked up once and passed over.
 */
const STOPS_TEXT = new Uint8Array(0x10000);
const STOPS_VALUE = new Uint8Array(0x10000);
for (const table of [STOPS_TEXT, STOPS_VALUE]) {
  for (let c = 0; c < SPACE; c++) table[c] = 1;
  table[LT] = 1;
  table[AMP] = 1;
  table[0xfffe] = 1;
  table[0xffff] = 1;
}
STOPS_VALUE[DQUOTE] = 1;
STOPS_VALUE[SQUOTE] = 1;
// ">" in text may end a "]]>", which text must not hold.
STOPS_TEXT[GT] = 1;

const PREDEFINED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Slots of Parser.interned for a large document (a power of two, as is the small size). */
const INTERNED = 4096;

/**
 * The document is read once, left to right; `i` never moves back. The current line and the
 * offset where it starts are kept up to date as line ends go by, so a position costs nothing.
 * LF, CRLF and a lone CR each end a line, as XML 1.0 (section 2.11) reads them.
 *
 * What is checked is XML 1.0 (fifth edition) well-formedness for documents without a DOCTYPE:
 * one root element, and nothing but whitespace, comments and processing instructions around it;
 * the XML declaration only at the very start and in its grammar (version 1.x, then an optional
 * encoding name, then an optional standalone yes|no, in that order); no other processing
 * instruction named xml in any case; names by the Name production, characters beyond U+FFFF
 * included; start tags (whitespace between attributes, quoted values without "<", no attribute
 * twice), matching end tags; references (the five predefined entities and character references
 * to legal characters, nothing else: no DOCTYPE can declare more); comments without "--", text
 * without "]]>"; comments, CDATA sections and processing instructions closed; no forbidden
 * character anywhere. A <!DOCTYPE> is refused where it stands (entity declarations could expand
 * exponentially), and so is nesting deeper than MAX_DEPTH. What is built: elements and
 * attributes with positions, text with line ends normalised (CRLF and CR to LF), attribute
 * values normalised (tab and line ends to a space), references decoded, CDATA kept apart (text
 * split by comments and processing instructions stays split).
 */
class Parser {
  private i = 0;
  private line = 1;
  private lineStart = 0;
  private readonly n: number;
  /** Set by reference(): the offset after the reference's ";". */
  private refEnd = 0;
  /** Whether the root element has started: before it, a missing root is reported where the content ends. */
  private rootStarted = false;
  private readonly interned: (string | undefined)[];
  private readonly doc: XmlDocument;
  /** Children of the open elements, innermost last, as XmlDocument child references. */
  private pending = new Int32Array(256);
  private pendingLength = 0;
  /** Set by startTag: whether the tag was an empty-element tag (`<x/>`). */
  private emptyTag = false;

  constructor(
    private readonly s: string,
    private readonly file: string,
    private readonly base: { line: number; column: number } | undefined,
    kept: boolean,
  ) {
    this.n = s.length;
    this.doc = new XmlDocument(s, file, kept ? new Interner().keep : asRead);
    // Small for an inline body, parsed on its own and often.
    this.interned = new Array<string | undefined>(s.length > 65_536 ? INTERNED : 256).fill(undefined);
  }

  /** The line of the current position, shifted for a fragment. */
  private lineAt(): number {
    const base = this.base;
    return base === undefined ? this.line : base.line + this.line - 1;
  }

  /** The column of `offset`, which must be on the current line, shifted for a fragment. */
  private columnAt(offset: number): number {
    const column = offset - this.lineStart + 1;
    const base = this.base;
    return base === undefined || this.line !== 1 ? column : base.column + column - 1;
  }

  private malformed(message: string, offset: number): XmlProblem {
    const c = this.s.charCodeAt(offset);
    // A forbidden character is the real problem wherever it stops the parse: a binary file.
    if (offset < this.n && isForbiddenCode(c)) return this.forbidden(offset);
    return new XmlProblem('xml-malformed', `malformed XML: ${message}`, offset);
  }

  private forbidden(offset: number): XmlProblem {
    const code = this.s.charCodeAt(offset).toString(16).toUpperCase().padStart(4, '0');
    return new XmlProblem('xml-malformed', `malformed XML: the character U+${code} is not allowed in XML (a binary file?)`, offset);
  }

  /** The file ends inside something: where the content ends when no root element started yet, else at the very end. */
  private truncated(what: string): XmlProblem {
    if (!this.rootStarted) return new XmlProblem('xml-malformed', `malformed XML: the file ends inside ${what}, before any root element`, this.s.trimEnd().length);
    return new XmlProblem('xml-malformed', `malformed XML: the file ends inside ${what} (truncated?)`, this.n);
  }

  document(): XmlElement {
    const s = this.s;
    if (s.charCodeAt(0) === 0xfeff) this.i = 1;
    const start = this.i;
    // Prolog: whitespace, comments, processing instructions (the declaration first of all).
    for (;;) {
      this.skipSpace();
      const i = this.i;
      if (i >= this.n) {
        throw new XmlProblem('xml-malformed', 'malformed XML: there is no root element (start tag expected)', s.trimEnd().length);
      }
      if (s.charCodeAt(i) !== LT) throw this.malformed('text is not allowed before the root element', i);
      const next = s.charCodeAt(i + 1);
      if (next === QUESTION) this.processingInstruction(i === start);
      else if (next === BANG) this.markupDeclaration(false);
      else if (next === SLASH) throw this.malformed('an end tag comes before any start tag', i);
      else break;
    }
    this.rootStarted = true;
    const root = this.rootElement();
    const rootName = this.doc.name(root);
    // Epilog: whitespace, comments and processing instructions only.
    for (;;) {
      this.skipSpace();
      const i = this.i;
      if (i >= this.n) return this.doc.element(root);
      if (s.charCodeAt(i) !== LT) throw this.malformed('text is not allowed after the root element', i);
      const next = s.charCodeAt(i + 1);
      if (next === QUESTION) this.processingInstruction(false);
      else if (next === BANG) this.markupDeclaration(false);
      else if (next === SLASH) throw this.malformed(`an end tag after the root element <${printable(rootName)}> was closed`, i);
      else throw this.malformed(`the document must have exactly one root element, but a second one starts here after <${printable(rootName)}>`, i);
    }
  }

  private skipSpace(): void {
    this.i = this.spaceFrom(this.i);
  }

  /**
   * The root element and everything inside it, without recursion (nesting is only bounded by
   * MAX_DEPTH). The content of open elements waits in one list, `pending`; an end tag moves its
   * element's share into the document. Returns the root's index.
   */
  private rootElement(): number {
    const s = this.s;
    const n = this.n;
    const doc = this.doc;
    const root = this.startTag();
    if (this.emptyTag) {
      doc.setChildren(root, this.pending, 0, 0);
      return root;
    }
    const stack: number[] = [root];
    const starts: number[] = [0];
    while (this.i < n) {
      const i = this.i;
      if (s.charCodeAt(i) !== LT) {
        this.push(this.textNode());
        continue;
      }
      const next = s.charCodeAt(i + 1);
      if (next === SLASH) {
        const depth = stack.length;
        const element = stack[depth - 1]!;
        this.endTag(element);
        const start = starts[depth - 1]!;
        doc.setChildren(element, this.pending, start, this.pendingLength);
        this.pendingLength = start;
        stack.pop();
        starts.pop();
        if (depth === 1) return root;
      } else if (next === BANG) {
        const cdata = this.markupDeclaration(true);
        if (cdata !== null) this.push(cdata);
      } else if (next === QUESTION) {
        this.processingInstruction(false);
      } else {
        const child = this.startTag();
        this.push(child);
        if (this.emptyTag) doc.setChildren(child, this.pending, 0, 0);
        else {
          // An empty element adds no level (as counted before): it cannot hold anything deeper.
          if (stack.length >= MAX_DEPTH) throw new XmlProblem('xml-too-deep', `elements are nested more than ${MAX_DEPTH} levels deep`, i);
          stack.push(child);
          starts.push(this.pendingLength);
        }
      }
    }
    const open = doc.name(stack[stack.length - 1]!);
    throw new XmlProblem('xml-malformed', `malformed XML: the file ends while <${printable(open)}> is still open (truncated?); close it with </${printable(open)}>`, n);
  }

  /** Appends a child reference for the innermost open element. */
  private push(ref: number): void {
    if (this.pendingLength === this.pending.length) {
      const larger = new Int32Array(this.pending.length * 2);
      larger.set(this.pending);
      this.pending = larger;
    }
    this.pending[this.pendingLength++] = ref;
  }

  /**
   * A start tag at `i` (on "<"), with its attributes: the element's index. `emptyTag` tells
   * whether it was `<x/>`.
   */
  private startTag(): number {
    const s = this.s;
    const n = this.n;
    const open = this.i;
    const line = this.lineAt();
    const column = this.columnAt(open);
    const name = this.name(open + 1, 'an element name');
    let i = open + 1 + name.length;
    const element = this.doc.openElement(name, line, column);
    for (;;) {
      // Whitespace, then "/>", ">" or an attribute.
      const before = i;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c === LF || (c === CR && s.charCodeAt(i + 1) !== LF)) {
          this.line++;
          this.lineStart = i + 1;
        } else if (c !== SPACE && c !== TAB && c !== CR) break;
      }
      if (i >= n) {
        this.i = i;
        throw this.truncated(`the start tag <${printable(name)}>`);
      }
      const c = s.charCodeAt(i);
      if (c === GT) {
        this.i = i + 1;
        this.doc.closeStartTag(element);
        this.emptyTag = false;
        return element;
      }
      if (c === SLASH) {
        if (s.charCodeAt(i + 1) !== GT) {
          if (i + 1 >= n) {
            this.i = i + 1;
            throw this.truncated(`the start tag <${printable(name)}>`);
          }
          throw this.malformed(`"/" in the start tag <${printable(name)}> must be followed by ">"`, i);
        }
        this.i = i + 2;
        this.doc.closeStartTag(element);
        this.emptyTag = true;
        return element;
      }
      if (i === before) {
        if (nameCharAt(s, i, false) > 0) throw this.malformed(`attributes of <${printable(name)}> must be separated by whitespace`, i);
        throw this.malformed(`unexpected character in the start tag <${printable(name)}>`, i);
      }
      this.attribute(i, element, name);
      i = this.i;
    }
  }

  /** One attribute at `start` (its name) of `owner`, named `element`; leaves `i` after its closing quote. */
  private attribute(start: number, owner: number, element: string): void {
    const s = this.s;
    const n = this.n;
    const line0 = this.lineAt();
    const column0 = this.columnAt(start);
    const name = this.name(start, 'an attribute name', element);
    let i = start + name.length;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === LF || (c === CR && s.charCodeAt(i + 1) !== LF)) {
        this.line++;
        this.lineStart = i + 1;
      } else if (c !== SPACE && c !== TAB && c !== CR) break;
    }
    if (i >= n) {
      this.i = i;
      throw this.truncated(`the start tag <${printable(element)}>`);
    }
    if (s.charCodeAt(i) !== EQUALS) throw this.malformed(`the attribute "${printable(name)}" on <${printable(element)}> has no value (write ${printable(name)}="...")`, start);
    for (i++; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === LF || (c === CR && s.charCodeAt(i + 1) !== LF)) {
        this.line++;
        this.lineStart = i + 1;
      } else if (c !== SPACE && c !== TAB && c !== CR) break;
    }
    if (i >= n) {
      this.i = i;
      throw this.truncated(`the start tag <${printable(element)}>`);
    }
    const quote = s.charCodeAt(i);
    if (quote !== DQUOTE && quote !== SQUOTE) {
      throw this.malformed(`the value of the attribute "${printable(name)}" on <${printable(element)}> must be in quotes`, i);
    }
    const valueStart = i + 1;
    this.i = valueStart;
    const decoded = this.characterData(quote, name);
    i = this.i;
    if (i >= n) throw this.truncated(`the value of the attribute "${printable(name)}"`);
    this.i = i + 1;
    const first = this.doc.attributeLineOf(owner, name);
    if (first >= 0) throw this.malformed(`the attribute "${printable(name)}" appears twice on <${printable(element)}> (first on line ${first})`, start);
    this.doc.addAttribute(name, valueStart, i, decoded, line0, column0);
  }

  /** The name that must start at `start`; `what` and `element` (where it stands) only word a problem. */
  private name(start: number, what: string, element?: string): string {
    if (element !== undefined && start >= this.n) what = `${what} in <${printable(element)}>`;
    const s = this.s;
    const n = this.n;
    if (start >= n) {
      this.i = start;
      throw this.truncated(what);
    }
    const first = s.charCodeAt(start);
    if (nameCharAt(s, start, true) === 0) {
      if (isForbiddenCode(first)) throw this.forbidden(start);
      if (s.charCodeAt(start - 1) === LT) throw this.malformed('"<" must start a tag (write &lt; for a literal "<")', start - 1);
      throw this.malformed(`${what}${element === undefined ? '' : ` in <${printable(element)}>`} is expected here`, start);
    }
    return this.intern(start, nameEnd(s, start + (first >= 0xd800 && first <= 0xdbff ? 2 : 1), n));
  }

  /**
   * The name from `start` to `end`, one string per distinct name: names repeat throughout a
   * configuration, and the document keeps one per element and attribute.
   */
  private intern(start: number, end: number): string {
    const s = this.s;
    const length = end - start;
    if (length > 64) return s.slice(start, end);
    let hash = length;
    for (let k = start; k < end; k++) hash = (Math.imul(hash, 31) + s.charCodeAt(k)) | 0;
    const table = this.interned;
    const slot = (hash ^ (hash >>> 13)) & (table.length - 1);
    const known = table[slot];
    if (known !== undefined && known.length === length && sameText(known, s, start)) return known;
    // A name is made the engine's own copy of that text (as property keys and literals in code
    // are): the compiler compares names with literals all the time, and two such strings compare
    // by identity.
    const fresh = internalized(s.slice(start, end));
    table[slot] = fresh;
    return fresh;
  }

  /** An end tag at `i` (on "</") that must close the element `open`. */
  private endTag(open: number): void {
    const s = this.s;
    const n = this.n;
    const at = this.i;
    const name = this.doc.name(open);
    let i = at + 2;
    if (!s.startsWith(name, i) || (i + name.length < n && nameCharAt(s, i + name.length, false) > 0)) {
      // A file cut inside the end tag is truncated, not mismatched.
      if (n - i <= name.length && name.startsWith(s.slice(i))) {
        this.i = n;
        throw this.truncated(`the end tag of <${printable(name)}>`);
      }
      let end = i;
      while (end < n && nameCharAt(s, end, false) > 0 && end - i < 200) end += nameCharAt(s, end, false);
      if (end < n && isForbiddenCode(s.charCodeAt(end))) throw this.forbidden(end);
      const found = s.slice(i, end);
      throw this.malformed(
        found === ''
          ? `an element name is expected after "</"`
          : `</${printable(found)}> does not close <${printable(name)}> (opened on line ${this.doc.line(open)}, column ${this.doc.column(open)}): close it with </${printable(name)}> first`,
        found === '' ? i : at,
      );
    }
    for (i += name.length; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === LF || (c === CR && s.charCodeAt(i + 1) !== LF)) {
        this.line++;
        this.lineStart = i + 1;
      } else if (c !== SPACE && c !== TAB && c !== CR) break;
    }
    if (i >= n) {
      this.i = i;
      throw this.truncated(`the end tag </${printable(name)}>`);
    }
    if (s.charCodeAt(i) !== GT) throw this.malformed(`the end tag </${printable(name)}> must end with ">" (end tags have no attributes)`, i);
    this.i = i + 1;
  }

  /** A text node up to the next "<": its child reference. */
  private textNode(): number {
    const s = this.s;
    const start = this.i;
    // Most text in a configuration is a line break and indentation before the next tag.
    if (s.charCodeAt(start) === LF) {
      let end = start + 1;
      while (s.charCodeAt(end) === SPACE) end++;
      if (s.charCodeAt(end) === LT) {
        this.line++;
        this.lineStart = start + 1;
        this.i = end;
        return this.doc.addText(start, end, null, false, 0, 0);
      }
    }
    const decoded = this.characterData(LT, null);
    return this.doc.addText(start, this.i, decoded, false, 0, 0);
  }

  /**
   * Character data from `i` up to `stop`: the next "<" for text, the closing quote for the value
   * of `attribute` (where a "<" is refused). Leaves `i` on the stop (or at the end of the file).
   * null when it is the source as is, else the text with references decoded and line ends
   * normalised (XML 1.0 section 2.11: CRLF and a lone CR become LF); in an attribute value each
   * literal tab, line feed and line end becomes one space (section 3.3.3: attributes are CDATA
   * without a DTD), while a character reference such as &#10; keeps its character.
   */
  private characterData(stop: number, attribute: string | null): string | null {
    const s = this.s;
    const n = this.n;
    const inText = stop === LT;
    const stops = inText ? STOPS_TEXT : STOPS_VALUE;
    const start = this.i;
    let i = start;
    let segment = i;
    let out = '';
    let line = this.line;
    let lineStart = this.lineStart;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (stops[c] === 0) continue;
      if (c === stop) break;
      if (c === LT) throw this.malformed(`"<" is not allowed in the value of the attribute "${printable(attribute!)}": write &lt; (or is a quote missing?)`, i);
      if (c === DQUOTE || c === SQUOTE) continue;
      if (c === GT) {
        // Only text stops here: "]]>" ends a CDATA section and may not stand in text (section 2.4).
        if (i - 2 >= start && s.charCodeAt(i - 1) === RBRACKET && s.charCodeAt(i - 2) === RBRACKET) {
          throw this.malformed('"]]>" is not allowed in text, as it ends a CDATA section: write ]]&gt;', i - 2);
        }
      } else if (c === AMP) {
        out += s.slice(segment, i) + this.reference(i);
        segment = this.refEnd;
        i = segment - 1;
      } else if (c >= 0xfffe) throw this.forbidden(i);
      else if (c === LF) {
        line++;
        lineStart = i + 1;
        if (!inText) {
          out += s.slice(segment, i) + ' ';
          segment = i + 1;
        }
      } else if (c === CR) {
        out += s.slice(segment, i) + (inText ? '\n' : ' ');
        if (s.charCodeAt(i + 1) === LF) i++;
        line++;
        lineStart = i + 1;
        segment = i + 1;
      } else if (c === TAB) {
        if (!inText) {
          out += s.slice(segment, i) + ' ';
          segment = i + 1;
        }
      } else throw this.forbidden(i);
    }
    this.line = line;
    this.lineStart = lineStart;
    this.i = i;
    return out === '' ? null : out + s.slice(segment, i);
  }

  /** The reference at `amp` (on "&"), decoded; sets refEnd after its ";". */
  private reference(amp: number): string {
    const s = this.s;
    const n = this.n;
    let i = amp + 1;
    if (s.charCodeAt(i) === HASH) {
      i++;
      const hex = s.charCodeAt(i) === 0x78; // x
      if (hex) i++;
      const digits = i;
      let cp = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        let d: number;
        if (c >= 0x30 && c <= 0x39) d = c - 0x30;
        else if (hex && c >= 0x61 && c <= 0x66) d = c - 0x57;
        else if (hex && c >= 0x41 && c <= 0x46) d = c - 0x37;
        else break;
        // Leading zeros are allowed, so the digits are not counted; past the last code point
        // the value only has to stay out of range.
        if (cp <= 0x10ffff) cp = cp * (hex ? 16 : 10) + d;
      }
      if (i === digits || s.charCodeAt(i) !== SEMICOLON) {
        throw this.malformed(`a character reference must be &#DIGITS; or &#xHEX; (write &amp; for a literal "&")`, amp);
      }
      if (!isLegalCodePoint(cp)) {
        throw this.malformed(`the character reference ${printable(s.slice(amp, i + 1))} names a character that XML does not allow`, amp);
      }
      this.refEnd = i + 1;
      return String.fromCodePoint(cp);
    }
    const start = i;
    while (i < n && i - start < 64 && isNameCode(s.charCodeAt(i))) i++;
    if (i === start || !isNameStartCode(s.charCodeAt(start)) || s.charCodeAt(i) !== SEMICOLON) {
      throw this.malformed(`"&" must start a reference such as &amp; (write &amp; for a literal "&")`, amp);
    }
    const name = s.slice(start, i);
    const value = Object.prototype.hasOwnProperty.call(PREDEFINED, name) ? PREDEFINED[name] : undefined;
    if (value === undefined) {
      throw this.malformed(
        `the entity &${printable(name)}; is not defined: XML knows only &amp; &lt; &gt; &quot; &apos; (write the character itself, or a character reference such as &#160;)`,
        amp,
      );
    }
    this.refEnd = i + 1;
    return value;
  }

  /**
   * "<!" at `i`: a comment (null), a CDATA section (its child reference; only where `inContent`), or a
   * refused DOCTYPE.
   */
  private markupDeclaration(inContent: boolean): number | null {
    const s = this.s;
    const i = this.i;
    if (s.startsWith('<!--', i)) {
      this.comment();
      return null;
    }
    if (s.startsWith('<![CDATA[', i)) {
      if (!inContent) throw this.malformed('a CDATA section is only allowed inside the root element', i);
      return this.cdata();
    }
    if (s.slice(i + 2, i + 9).toUpperCase() === 'DOCTYPE') {
      // Entity declarations can expand exponentially; configurations never need a DOCTYPE.
      throw new XmlProblem('xml-doctype', 'a <!DOCTYPE> declaration is not allowed: remove it (entity declarations are not supported)', i);
    }
    if (i + 9 >= this.n && ('<!--'.startsWith(s.slice(i)) || '<![CDATA['.startsWith(s.slice(i)))) {
      this.i = this.n;
      throw this.truncated('a comment or CDATA section');
    }
    throw this.malformed('"<!" must start a comment <!-- --> or a CDATA section <![CDATA[ ]]>', i);
  }

  private comment(): void {
    const s = this.s;
    const n = this.n;
    let line = this.line;
    let lineStart = this.lineStart;
    for (let i = this.i + 4; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === HYPHEN) {
        if (s.charCodeAt(i + 1) === HYPHEN) {
          if (s.charCodeAt(i + 2) === GT) {
            this.line = line;
            this.lineStart = lineStart;
            this.i = i + 3;
            return;
          }
          if (i + 2 < n) {
            // XML 1.0 section 2.5: a comment may not hold "--", nor end with "--->".
            this.line = line;
            this.lineStart = lineStart;
            throw this.malformed(
              s.charCodeAt(i + 2) === HYPHEN && s.charCodeAt(i + 3) === GT
                ? 'a comment may not end with "--->": remove the third "-"'
                : '"--" is not allowed inside a comment <!-- -->: write it another way (such as "- -"), or end the comment with -->',
              i,
            );
          }
        }
      } else if (c < SPACE) {
        if (c === LF || (c === CR && s.charCodeAt(i + 1) !== LF)) {
          line++;
          lineStart = i + 1;
        } else if (c !== TAB && c !== CR) throw this.forbidden(i);
      } else if (c >= 0xfffe) throw this.forbidden(i);
    }
    this.i = n;
    throw this.truncated('a comment <!-- (it needs -->)');
  }

  /** A CDATA section: its child reference. */
  private cdata(): number {
    const s = this.s;
    const n = this.n;
    const contentStart = this.i + 9;
    const contentLine = this.lineAt();
    const contentColumn = this.columnAt(contentStart);
    let line = this.line;
    let lineStart = this.lineStart;
    let out = '';
    let segment = contentStart;
    for (let i = contentStart; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === RBRACKET) {
        if (s.charCodeAt(i + 1) === RBRACKET && s.charCodeAt(i + 2) === GT) {
          this.line = line;
          this.lineStart = lineStart;
          this.i = i + 3;
          return this.doc.addText(segment, i, out === '' ? null : out + s.slice(segment, i), true, contentLine, contentColumn);
        }
      } else if (c < SPACE) {
        if (c === LF) {
          line++;
          lineStart = i + 1;
        } else if (c === CR) {
          out += s.slice(segment, i) + '\n';
          if (s.charCodeAt(i + 1) === LF) i++;
          line++;
          lineStart = i + 1;
          segment = i + 1;
        } else if (c !== TAB) throw this.forbidden(i);
      } else if (c >= 0xfffe) throw this.forbidden(i);
    }
    this.i = n;
    throw this.truncated('a CDATA section (it needs ]]>)');
  }

  /** "<?" at `i`: the XML declaration (only where `atStart`) or a processing instruction, skipped. */
  private processingInstruction(atStart: boolean): void {
    const s = this.s;
    const n = this.n;
    const open = this.i;
    if (open + 2 >= n) {
      this.i = n;
      throw this.truncated('a processing instruction <?');
    }
    const target = this.name(open + 2, 'the name of a processing instruction');
    let i = open + 2 + target.length;
    const c = s.charCodeAt(i);
    if (i < n && c !== SPACE && c !== TAB && c !== LF && c !== CR && !(c === QUESTION && s.charCodeAt(i + 1) === GT)) {
      throw this.malformed(`the processing instruction <?${printable(target)} must be followed by a space or "?>"`, i);
    }
    if (target === 'xml') {
      if (!atStart) throw this.malformed('the XML declaration <?xml ...?> is allowed only at the very start of the file', open);
      this.declaration(i);
      return;
    }
    if (target.length === 3 && target.toLowerCase() === 'xml') {
      // Production [17]: "xml" in any case is reserved, and the declaration is written in lower case.
      throw this.malformed(`<?${printable(target)} is not allowed: the XML declaration is written <?xml in lower case, and no other processing instruction may be named xml`, open);
    }
    let line = this.line;
    let lineStart = this.lineStart;
    for (; i < n; i++) {
      const ch = s.charCodeAt(i);
      if (ch === QUESTION) {
        if (s.charCodeAt(i + 1) === GT) {
          this.line = line;
          this.lineStart = lineStart;
          this.i = i + 2;
          return;
        }
      } else if (ch < SPACE) {
        if (ch === LF || (ch === CR && s.charCodeAt(i + 1) !== LF)) {
          line++;
          lineStart = i + 1;
        } else if (ch !== TAB && ch !== CR) throw this.forbidden(i);
      } else if (ch >= 0xfffe) throw this.forbidden(i);
    }
    this.i = n;
    throw this.truncated(`the processing instruction <?${printable(target)} (it needs ?>)`);
  }

  /**
   * The XML declaration from `i` (after "<?xml") to "?>", as production [23] has it:
   * version="1.x", then optionally encoding="NAME", then optionally standalone="yes|no", in this
   * order, each after whitespace (line ends included), with "=" between optional whitespace.
   */
  private declaration(i: number): void {
    const s = this.s;
    const n = this.n;
    const example = '<?xml version="1.0" encoding="UTF-8"?>';
    let next = 0;
    for (;;) {
      const before = i;
      i = this.spaceFrom(i);
      if (i >= n) {
        this.i = n;
        throw this.truncated('the XML declaration <?xml (it needs ?>)');
      }
      if (s.charCodeAt(i) === QUESTION && s.charCodeAt(i + 1) === GT) {
        if (next === 0) throw this.malformed(`the XML declaration needs a version: write ${example}`, i);
        this.i = i + 2;
        return;
      }
      const end = nameEnd(s, i, n);
      if (end === i) throw this.malformed(`the XML declaration must look like ${example}`, i);
      if (i === before) throw this.malformed('the parts of the XML declaration must be separated by whitespace', i);
      const name = s.slice(i, end);
      const k = DECLARATION_NAMES.indexOf(name);
      if (k < 0) {
        const lower = DECLARATION_NAMES.indexOf(name.toLowerCase());
        throw this.malformed(
          lower >= 0
            ? `write "${DECLARATION_NAMES[lower]}" in lower case in the XML declaration`
            : `the XML declaration takes only version, encoding and standalone, not "${printable(name)}"`,
          i,
        );
      }
      if (k < next) {
        throw this.malformed(
          k === next - 1
            ? `"${name}" appears twice in the XML declaration`
            : `in the XML declaration ${name} comes before ${DECLARATION_NAMES[next - 1]}: the order is version, encoding, standalone`,
          i,
        );
      }
      if (next === 0 && k !== 0) throw this.malformed(`the XML declaration must start with the version: write ${example}`, i);
      i = this.spaceFrom(end);
      if (s.charCodeAt(i) !== EQUALS) throw this.malformed(`"${name}" in the XML declaration needs a value: ${name}="..."`, i);
      i = this.spaceFrom(i + 1);
      const quote = s.charCodeAt(i);
      if (quote !== DQUOTE && quote !== SQUOTE) throw this.malformed(`the value of "${name}" in the XML declaration must be in quotes`, i);
      const valueStart = i + 1;
      let valueEnd = valueStart;
      while (valueEnd < n && s.charCodeAt(valueEnd) !== quote && s.charCodeAt(valueEnd) !== GT) valueEnd++;
      if (valueEnd >= n) {
        this.i = n;
        throw this.truncated('the XML declaration <?xml (it needs ?>)');
      }
      const value = s.slice(valueStart, valueEnd);
      if (s.charCodeAt(valueEnd) !== quote || !DECLARATION_VALUES[k]!.test(value)) {
        throw this.malformed(
          k === 0
            ? `the version "${printable(value)}" is not XML 1.0: write version="1.0"`
            : k === 1
              ? `"${printable(value)}" is not an encoding name: write encoding="UTF-8" (a letter, then letters, digits, ".", "_" or "-")`
              : `standalone must be "yes" or "no", not "${printable(value)}"`,
          valueStart,
        );
      }
      next = k + 1;
      i = valueEnd + 1;
    }
  }

  /** Whitespace from `i` on, line ends counted: the offset after it. */
  private spaceFrom(i: number): number {
    const s = this.s;
    const n = this.n;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === LF || (c === CR && s.charCodeAt(i + 1) !== LF)) {
        this.line++;
        this.lineStart = i + 1;
      } else if (c !== SPACE && c !== TAB && c !== CR) break;
    }
    return i;
  }
}

/** The XML declaration's pseudo-attributes, in their order, and their values (productions [26], [81], [32]). */
const DECLARATION_NAMES = ['version', 'encoding', 'standalone'];
const DECLARATION_VALUES = [/^1\.[0-9]+$/, /^[A-Za-z][A-Za-z0-9._-]*$/, /^(?:yes|no)$/];

/** Whether `s` holds `text` at `start` (a loop: startsWith with a position is a slow call for a name of a few characters). */
function sameText(text: string, s: string, start: number): boolean {
  for (let k = 0; k < text.length; k++) if (text.charCodeAt(k) !== s.charCodeAt(start + k)) return false;
  return true;
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
 * invalid UTF-8 leniently would turn a Latin-1 file's "é" into U+FFFD and serve it silently; the
 * same holds for UTF-16 with a lone surrogate. A declaration that contradicts the byte order mark
 * (UTF-16 bytes declared UTF-8, a UTF-8 mark on a file declared Latin-1) is refused, as is UTF-16
 * declared without its mark (section 4.3.3).
 */
export function decodeXml(bytes: Uint8Array): XmlDecodeResult {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    const form = bytes[0] === 0xff ? 'utf-16le' : 'utf-16be';
    let text: string;
    try {
      text = new TextDecoder(form, { fatal: true }).decode(bytes);
    } catch {
      return { ok: false, code: 'xml-encoding', message: `the file is not valid UTF-16 (it has a byte order mark, then an unpaired surrogate or an odd number of bytes): save it again as UTF-8 or UTF-16`, ...firstInvalidUtf16(bytes, form) };
    }
    const declared = declaredEncoding(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    if (declared !== null && declared.label !== 'utf-16' && declared.label !== form) {
      return { ok: false, code: 'xml-encoding', message: `the file is UTF-16 (by its byte order mark) but its XML declaration names "${declared.name}": write encoding="UTF-16", or save the file as ${declared.name}`, line: 1, column: declared.column };
    }
    return { ok: true, text };
  }
  const utf8Mark = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  // The declaration is ASCII in every encoding that TextDecoder knows apart from UTF-16.
  const head = new TextDecoder('latin1').decode(bytes.subarray(utf8Mark ? 3 : 0, 256));
  const declared = declaredEncoding(head);
  if (declared !== null && declared.label !== 'utf-8' && declared.label !== 'utf8') {
    if (utf8Mark) {
      return { ok: false, code: 'xml-encoding', message: `the file starts with a UTF-8 byte order mark but its XML declaration names "${declared.name}": write encoding="UTF-8", or save the file as ${declared.name} without the mark`, line: 1, column: declared.column };
    }
    if (declared.label === 'utf-16' || declared.label === 'utf-16le' || declared.label === 'utf-16be') {
      return { ok: false, code: 'xml-encoding', message: `the XML declaration names "${declared.name}", but the file has no UTF-16 byte order mark and reads as ASCII: write encoding="UTF-8", or save the file as UTF-16 with its mark`, line: 1, column: declared.column };
    }
    let decoder: TextDecoder;
    try {
      decoder = new TextDecoder(declared.label);
    } catch {
      return { ok: false, code: 'xml-encoding', message: `the encoding "${declared.name}" named in the XML declaration is not supported: save the file as UTF-8`, line: 1, column: declared.column };
    }
    return { ok: true, text: decoder.decode(bytes) };
  }
  try {
    return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    const offset = firstInvalidUtf8(bytes);
    const before = new TextDecoder('utf-8').decode(bytes.subarray(0, offset));
    const at = new LineIndex(before).at(before.length);
    const byte = (bytes[offset] ?? 0).toString(16).toUpperCase().padStart(2, '0');
    return {
      ok: false,
      code: 'xml-encoding',
      message: `the file is not valid UTF-8 (byte 0x${byte}): save it as UTF-8, or name its encoding in <?xml version="1.0" encoding="..."?>`,
      line: at.line,
      column: at.column,
    };
  }
}

/** The encoding an XML declaration at the start of `text` names: as written, lower-cased for TextDecoder, and its 1-based column. */
function declaredEncoding(text: string): { name: string; label: string; column: number } | null {
  const m = /^<\?xml[ \t\r\n][^>]*?\bencoding[ \t\r\n]*=[ \t\r\n]*["']([^"']*)["']/.exec(text);
  if (m === null) return null;
  const name = m[1]!;
  // On line 1 for every declaration written on one line; a declaration over several lines is rare.
  return { name, label: name.trim().toLowerCase(), column: m[0].length - name.length };
}

/** Where UTF-16 decoding fails: the first unpaired surrogate, or the odd last byte. */
function firstInvalidUtf16(bytes: Uint8Array, form: 'utf-16le' | 'utf-16be'): { line: number; column: number } {
  const units = Math.floor(bytes.length / 2);
  let text = '';
  let k = 1;
  for (; k < units; k++) {
    const unit = form === 'utf-16le' ? bytes[2 * k]! | (bytes[2 * k + 1]! << 8) : (bytes[2 * k]! << 8) | bytes[2 * k + 1]!;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = k + 1 < units ? (form === 'utf-16le' ? bytes[2 * k + 2]! | (bytes[2 * k + 3]! << 8) : (bytes[2 * k + 2]! << 8) | bytes[2 * k + 3]!) : -1;
      if (next < 0xdc00 || next > 0xdfff) break;
      text += String.fromCharCode(unit, next);
      k++;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) break;
    else text += String.fromCharCode(unit);
  }
  return new LineIndex(text).at(text.length);
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
