// Where a malformed JSON text goes wrong, for a 400 someone can act on: JSON.parse (Node 22 to 26)
// says "Unexpected token 'x', "…the body…" is not valid JSON" for many mistakes, without a
// position and with the body in it. Run only after JSON.parse has refused the text, so its cost
// is never paid by a well-formed body. Iterative: a body nested a million levels deep must not
// overflow the stack.

export interface JsonSyntaxError {
  readonly line: number;
  /** In characters from the start of the line, from 1. */
  readonly column: number;
  readonly problem: string;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERALS = ['true', 'false', 'null'] as const;

type Frame = { readonly kind: 'array' | 'object'; expect: 'first' | 'value' | 'name' | 'colon' | 'comma' };

/** The first syntax error of `text`; null when it is well-formed after all. */
export function locateJsonError(text: string): JsonSyntaxError | null {
  let i = 0;
  const stack: Frame[] = [];
  const at = (offset: number, problem: string): JsonSyntaxError => ({ ...lineAndColumn(text, offset), problem });
  const skip = () => {
    while (i < text.length && WHITESPACE.has(text[i]!)) i++;
  };
  const found = () => (i >= text.length ? 'the end of the body' : `'${text[i]}'`);
  /** A string at i; the error, or null with i after it. */
  const string = (): JsonSyntaxError | null => {
    const start = i++;
    for (;;) {
      if (i >= text.length) return at(start, 'a string is not closed');
      const c = text.charCodeAt(i);
      if (c === 0x22) return (i++, null);
      if (c < 0x20) return at(i, 'a control character (such as a line break or tab) must be escaped in a string');
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return at(i, 'a \\u escape needs four hexadecimal digits');
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else return at(i, `'\\${e ?? ''}' is not an escape JSON knows`);
      } else i++;
    }
  };
  /** A value starting at i (not an array or object): the error, or null with i after it. */
  const scalar = (): JsonSyntaxError | null => {
    const c = text[i];
    if (c === '"') return string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(text);
      if (match === null) return at(i, 'a number is not written as JSON writes one');
      i += match[0].length;
      return null;
    }
    for (const literal of LITERALS) {
      if (text.startsWith(literal, i)) return ((i += literal.length), null);
    }
    return at(i, `expected a value, found ${found()}`);
  };

  skip();
  for (;;) {
    const top = stack[stack.length - 1];
    // Expecting a value: at the start, after "[", "," in an array, or ":".
    if (top === undefined || top.expect === 'value' || (top.kind === 'array' && top.expect === 'first')) {
      if (top?.kind === 'array' && top.expect === 'first' && text[i] === ']') {
        stack.pop();
        i++;
      } else if (text[i] === '[' || text[i] === '{') {
        if (top !== undefined) top.expect = 'comma';
        stack.push({ kind: text[i] === '[' ? 'array' : 'object', expect: 'first' });
        i++;
        skip();
        continue;
      } else {
        const problem = scalar();
        if (problem !== null) return problem;
        if (top !== undefined) top.expect = 'comma';
      }
      if (stack.length === 0) {
        skip();
        return i < text.length ? at(i, `unexpected ${found()} after the JSON value`) : null;
      }
    } else if (top.expect === 'first' || top.expect === 'name') {
      if (top.expect === 'first' && text[i] === '}') {
        stack.pop();
        i++;
        if (stack.length === 0) {
          skip();
          return i < text.length ? at(i, `unexpected ${found()} after the JSON value`) : null;
        }
      } else {
        if (text[i] !== '"') return at(i, `expected a member name in double quotes, found ${found()}`);
        const problem = string();
        if (problem !== null) return problem;
        top.expect = 'colon';
      }
    } else if (top.expect === 'colon') {
      if (text[i] !== ':') return at(i, `expected ':' after the member name, found ${found()}`);
      i++;
      top.expect = 'value';
    } else {
      const close = top.kind === 'array' ? ']' : '}';
      if (text[i] === ',') {
        i++;
        top.expect = top.kind === 'array' ? 'value' : 'name';
      } else if (text[i] === close) {
        stack.pop();
        i++;
        if (stack.length === 0) {
          skip();
          return i < text.length ? at(i, `unexpected ${found()} after the JSON value`) : null;
        }
      } else return at(i, `expected ',' or '${close}', found ${found()}`);
    }
    skip();
  }
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let k = text.indexOf('\n'); k !== -1 && k < offset; k = text.indexOf('\n', k + 1)) {
    line++;
    start = k + 1;
  }
  // Characters, not UTF-16 units: an emoji before the mistake counts once.
  let column = 1;
  for (const _ of text.slice(start, offset)) column++;
  return { line, column };
}
