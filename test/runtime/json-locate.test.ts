// The scanner that says where a refused JSON body goes wrong must agree with JSON.parse on what
// is well-formed: a body it calls fine while JSON.parse refuses it would get no location, and
// one it refuses that JSON.parse reads is never scanned (it runs only after JSON.parse failed).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { locateJsonError } from '../../src/runtime/json-locate.js';

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('locateJsonError', () => {
  it('agrees with JSON.parse on texts made of JSON pieces', () => {
    const piece = fc.constantFrom('{', '}', '[', ']', ',', ':', '"a"', '"b\\n"', '"\\u00e9"', '"\\x"', '"', '1', '-0.5e3', '01', '1.', 'true', 'nul', 'null', ' ', '\n', '\t', '\u0001', 'x');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        expect(locateJsonError(text) === null).toBe(parses(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees with JSON.parse on well-formed JSON, however nested', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, pretty) => {
        expect(locateJsonError(JSON.stringify(value, null, pretty ? 2 : undefined))).toBeNull();
      }),
    );
  });

  it('gives the line and column, counted in characters', () => {
    expect(locateJsonError('{\n  "a": 1,\n  "b": }')).toEqual({ line: 3, column: 8, problem: "expected a value, found '}'" });
    expect(locateJsonError('{"😀": 1 "b": 2}')).toEqual({ line: 1, column: 9, problem: `expected ',' or '}', found '"'` });
    expect(locateJsonError('[1, 2')).toEqual({ line: 1, column: 6, problem: "expected ',' or ']', found the end of the body" });
    expect(locateJsonError('{"a": "x\ty"}')).toMatchObject({ line: 1, column: 9 });
  });

  it('does not overflow the stack on a body nested a million levels deep', () => {
    expect(locateJsonError('['.repeat(1_000_000))).toMatchObject({ line: 1, column: 1_000_001 });
  });
});
