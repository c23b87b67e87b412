// What the XML reader (parser.ts) meets outside elements and text: comments, CDATA sections,
// processing instructions, the XML declaration, and the DOCTYPE it refuses.

import { CR, DQUOTE, EQUALS, GT, HYPHEN, LF, QUESTION, RBRACKET, SPACE, SQUOTE, TAB, nameEnd } from './chars.js';
import { printable, Scanner, XmlProblem } from './scanner.js';

export abstract class MarkupScanner extends Scanner {
  /**
   * "<!" at `i`: a comment (null), a CDATA section (its child reference; only where `inContent`), or a
   * refused DOCTYPE.
   */
  protected markupDeclaration(inContent: boolean): number | null {
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

  protected comment(): void {
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
  protected cdata(): number {
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
  protected processingInstruction(atStart: boolean): void {
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
  protected declaration(i: number): void {
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
}

/** The XML declaration's pseudo-attributes, in their order, and their values (productions [26], [81], [32]). */
const DECLARATION_NAMES = ['version', 'encoding', 'standalone'];
const DECLARATION_VALUES = [/^1\.[0-9]+$/, /^[A-Za-z][A-Za-z0-9._-]*$/, /^(?:yes|no)$/];
