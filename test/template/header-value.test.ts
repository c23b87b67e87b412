// refusedHeaderCharacter asks node:http itself and locates the character with a copy of node's
// class: the two must agree on every UTF-16 code unit, or a blamed position could be wrong.
import { validateHeaderValue } from 'node:http';
import { describe, expect, it } from 'vitest';
import { refusedHeaderCharacter } from '../../src/header-value.js';

const nodeRefuses = (value: string): boolean => {
  try {
    validateHeaderValue('x', value);
    return false;
  } catch {
    return true;
  }
};

describe('refusedHeaderCharacter', () => {
  it('refuses exactly what node:http refuses, for every UTF-16 code unit, at its position', () => {
    const disagreements: string[] = [];
    for (let unit = 0; unit <= 0xffff; unit++) {
      const value = `ok ${String.fromCharCode(unit)} ok`;
      const at = refusedHeaderCharacter(value);
      if (nodeRefuses(value) !== at >= 0 || (at >= 0 && at !== 3)) disagreements.push(unit.toString(16));
    }
    expect(disagreements).toEqual([]);
  });

  it('refuses NUL, VT, FF, DEL, U+2028 and characters beyond Latin-1; sends TAB, Latin-1 and U+0085', () => {
    for (const refused of ['\u0000', '\u000b', '\u000c', '\u007f', '\u2028', '€', '\r', '\n'])
      expect(refusedHeaderCharacter(`a${refused}`), JSON.stringify(refused)).toBe(1);
    for (const sent of ['\t', 'é', '\u0085', 'plain']) expect(refusedHeaderCharacter(`a${sent}`), JSON.stringify(sent)).toBe(-1);
  });
});
