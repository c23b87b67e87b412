// A small XML parser with positions: every element and attribute keeps its 1-based line and
// column, so every diagnostic can point at the exact place in the file. One pass builds the tree
// (an XmlDocument, see compiler/xml-tree.ts) and checks well-formedness (configurations of tens of
// megabytes are validated in seconds); the first problem in document order is the one reported.
// Hand-written rather than a library, and shaped for speed (one table lookup per character,
// interned names): docs/performance.md, "XML parser". It replaced fast-xml-parser and builds
// the same tree for every well-formed input, which is why some comments below name it.
// Three classes, one reader: the cursor, its positions and problems (scanner.ts), the markup
// outside elements (markup.ts), and elements, attributes and text (this file).

import type { XmlElement } from '../xml-tree.js';
import { MarkupScanner } from './markup.js';
import { printable, XmlProblem, type XmlProblemCode } from './scanner.js';
import { LineIndex } from './line-index.js';
import {
  AMP,
  BANG,
  CR,
  DQUOTE,
  EQUALS,
  GT,
  HASH,
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
} from './chars.js';

export type { XmlProblemCode };

export type XmlParseResult =
  | { readonly ok: true; readonly root: XmlElement }
  | { readonly ok: false; readonly message: string; readonly line: number; readonly column: number; readonly code: XmlProblemCode };

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

const PREDEFINED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/**
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
class Parser extends MarkupScanner {
  /** Set by reference(): the offset after the reference's ";". */
  private refEnd = 0;
  /** Children of the open elements, innermost last, as XmlDocument child references. */
  private pending = new Int32Array(256);
  private pendingLength = 0;
  /** Set by startTag: whether the tag was an empty-element tag (`<x/>`). */
  private emptyTag = false;

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
}
