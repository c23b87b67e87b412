// The cursor of the XML reader (parser.ts): where it is in the text, on which line, how a
// problem found there is worded, and the names it reads (interned). The markup outside elements
// (markup.ts) and the elements themselves (parser.ts) are read by the classes built on it.

import { XmlDocument } from '../xml-tree.js';
import { asRead, internalized, Interner } from '../retained.js';
import { CR, LF, LT, SPACE, TAB, isForbiddenCode, nameCharAt, nameEnd } from './chars.js';

export type XmlProblemCode = 'xml-malformed' | 'xml-doctype' | 'xml-too-deep' | 'file-empty' | 'xml-encoding';

/** Thrown inside the parser to unwind to parseXml with the first problem of the document. */
export class XmlProblem {
  constructor(
    readonly code: XmlProblemCode,
    readonly message: string,
    readonly offset: number,
  ) {}
}

/** Slots of Scanner.interned for a large document (a power of two, as is the small size). */
const INTERNED = 4096;

/**
 * The document is read once, left to right; `i` never moves back. The current line and the
 * offset where it starts are kept up to date as line ends go by, so a position costs nothing.
 * LF, CRLF and a lone CR each end a line, as XML 1.0 (section 2.11) reads them.
 */
export abstract class Scanner {
  protected i = 0;
  protected line = 1;
  protected lineStart = 0;
  protected readonly n: number;
  /** Whether the root element has started: before it, a missing root is reported where the content ends. */
  protected rootStarted = false;
  protected readonly interned: (string | undefined)[];
  protected readonly doc: XmlDocument;

  constructor(
    protected readonly s: string,
    protected readonly file: string,
    protected readonly base: { line: number; column: number } | undefined,
    kept: boolean,
  ) {
    this.n = s.length;
    this.doc = new XmlDocument(s, file, kept ? new Interner().keep : asRead);
    // Small for an inline body, parsed on its own and often.
    this.interned = new Array<string | undefined>(s.length > 65_536 ? INTERNED : 256).fill(undefined);
  }

  /** The line of the current position, shifted for a fragment. */
  protected lineAt(): number {
    const base = this.base;
    return base === undefined ? this.line : base.line + this.line - 1;
  }

  /** The column of `offset`, which must be on the current line, shifted for a fragment. */
  protected columnAt(offset: number): number {
    const column = offset - this.lineStart + 1;
    const base = this.base;
    return base === undefined || this.line !== 1 ? column : base.column + column - 1;
  }

  protected malformed(message: string, offset: number): XmlProblem {
    const c = this.s.charCodeAt(offset);
    // A forbidden character is the real problem wherever it stops the parse: a binary file.
    if (offset < this.n && isForbiddenCode(c)) return this.forbidden(offset);
    return new XmlProblem('xml-malformed', `malformed XML: ${message}`, offset);
  }

  protected forbidden(offset: number): XmlProblem {
    const code = this.s.charCodeAt(offset).toString(16).toUpperCase().padStart(4, '0');
    return new XmlProblem('xml-malformed', `malformed XML: the character U+${code} is not allowed in XML (a binary file?)`, offset);
  }

  /** The file ends inside something: where the content ends when no root element started yet, else at the very end. */
  protected truncated(what: string): XmlProblem {
    if (!this.rootStarted)
      return new XmlProblem('xml-malformed', `malformed XML: the file ends inside ${what}, before any root element`, this.s.trimEnd().length);
    return new XmlProblem('xml-malformed', `malformed XML: the file ends inside ${what} (truncated?)`, this.n);
  }

  protected skipSpace(): void {
    this.i = this.spaceFrom(this.i);
  }

  /** The name that must start at `start`; `what` and `element` (where it stands) only word a problem. */
  protected name(start: number, what: string, element?: string): string {
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
  protected intern(start: number, end: number): string {
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

  /** Whitespace from `i` on, line ends counted: the offset after it. */
  protected spaceFrom(i: number): number {
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

/** Whether `s` holds `text` at `start` (a loop: startsWith with a position is a slow call for a name of a few characters). */
function sameText(text: string, s: string, start: number): boolean {
  for (let k = 0; k < text.length; k++) if (text.charCodeAt(k) !== s.charCodeAt(start + k)) return false;
  return true;
}

/** Shows control characters of a binary file as escapes in messages. */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
