// A small XML parser with positions: every element and attribute keeps its 1-based line and
// column, so every diagnostic can point at the exact place in the file. One pass builds the tree
// (an XmlDocument, see xml-tree.ts) and checks well-formedness (configurations of tens of
// megabytes are validated in seconds); the first problem in document order is the one reported.
// Hand-written rather than a library, and shaped for speed (one table lookup per character,
// interned names): docs/performance.md, "XML parser". It replaced fast-xml-parser and builds
// the same tree for every well-formed input, which is why some comments below name it.

import { XmlDocument, type XmlElement } from '../xml-tree.js';
import { asRead, internalized, Interner } from '../retained.js';
import { LineIndex } from './line-index.js';
import {
  AMP,
  BANG,
  CR,
  DQUOTE,
  EQUALS,
  GT,
  HASH,
  HYPHEN,
  LF,
  LT,
  QUESTION,
  RBRACKET,
  SEMICOLON,
  SLASH,
  SPACE,
  SQUOTE,
  STOPS_TEXT,
  STOPS_VALUE,
  TAB,
  isForbiddenCode,
  isLegalCodePoint,
  isNameCode,
  isNameStartCode,
  nameCharAt,
  nameEnd,
} from './chars.js';

export type XmlParseResult =
  | { readonly ok: true; readonly root: XmlElement }
  | { readonly ok: false; readonly message: string; readonly line: number; readonly column: number; readonly code: XmlProblemCode };

export type XmlProblemCode = 'xml-malformed' | 'xml-doctype' | 'xml-too-deep' | 'file-empty' | 'xml-encoding';

/** Deeper than any real configuration; keeps hostile input from exhausting the stack. */
export const MAX_DEPTH = 200;

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
    if (!this.rootStarted)
      return new XmlProblem('xml-malformed', `malformed XML: the file ends inside ${what}, before any root element`, this.s.trimEnd().length);
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
    throw new XmlProblem(
      'xml-malformed',
      `malformed XML: the file ends while <${printable(open)}> is still open (truncated?); close it with </${printable(open)}>`,
      n,
    );
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
      i = this.spaceFrom(i);
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
      // The next tag where an attribute or ">" should be: the ">" was forgotten. Shown where it belongs, not at the next tag.
      if (c === LT) throw this.malformed(`the start tag <${printable(name)}> is not closed: write ">" here, before the next tag`, before);
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
    i = this.spaceFrom(i);
    if (i >= n) {
      this.i = i;
      throw this.truncated(`the start tag <${printable(element)}>`);
    }
    if (s.charCodeAt(i) !== EQUALS)
      throw this.malformed(`the attribute "${printable(name)}" on <${printable(element)}> has no value (write ${printable(name)}="...")`, start);
    i = this.spaceFrom(i + 1);
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
    i = this.spaceFrom(i + name.length);
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
      throw this.malformed(
        `<?${printable(target)} is not allowed: the XML declaration is written <?xml in lower case, and no other processing instruction may be named xml`,
        open,
      );
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
