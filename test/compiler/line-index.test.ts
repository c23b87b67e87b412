import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineIndex } from '../../src/compiler/xml/line-index.js';

/** Line and column of every offset, the slow and obvious way. */
function expected(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset; i++) {
    const c = text[i];
    if (c === '\r' && text[i + 1] === '\n') continue;
    if (c === '\n' || c === '\r') {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

describe('LineIndex', () => {
  it('reads LF, CRLF and a lone CR each as one line end, as XML 1.0 does', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'é', '\n', '\r', '\r\n', ' ')).map((parts) => parts.join('')),
        (text) => {
          const index = new LineIndex(text);
          for (let offset = 0; offset <= text.length; offset++) {
            // Between the CR and the LF of a CRLF is no position a parser reports.
            if (text[offset - 1] === '\r' && text[offset] === '\n') continue;
            const at = expected(text, offset);
            expect(index.at(offset)).toEqual(at);
            expect(index.offset(at.line, at.column)).toBe(offset);
          }
        },
      ),
    );
    expect(new LineIndex('a\nb').offset(3, 1)).toBe(-1);
  });
});
