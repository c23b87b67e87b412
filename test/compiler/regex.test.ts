// Author regexes (compiler/regex.ts): RE2 syntax, whole-value matching, and what is refused
// with which name. Through the binary: test/reliability/author-regex.e2e.test.ts.
import { describe, expect, it } from 'vitest';
import type { ParameterRules } from '../../src/compiler/ast.js';
import { ruleViolation } from '../../src/compiler/parameter-rules.js';
import { compileAuthorRegex, type AuthorRegex } from '../../src/compiler/regex.js';

function compiled(source: string): AuthorRegex {
  const result = compileAuthorRegex(source);
  if (result.kind !== 'compiled') throw new Error(`${source}: ${JSON.stringify(result)}`);
  return result.regex;
}

describe('matching', () => {
  it('matches the whole value, every alternative included', () => {
    const plan = compiled('basic|pro');
    expect(['basic', 'pro'].map((v) => plan.matchesWhole(v))).toEqual([true, true]);
    expect(['basics', 'professional', 'xpro', ''].map((v) => plan.matchesWhole(v))).toEqual([false, false, false, false]);
    expect(compiled('[0-9]{5}').matchesWhole('12345\n')).toBe(false);
  });

  it('reads a value by code points, and has no flags but those written inline', () => {
    expect(compiled('.').matchesWhole('😀')).toBe(true);
    expect(compiled('a.b').matchesWhole('a\nb')).toBe(false);
    expect(compiled('abc').matchesWhole('ABC')).toBe(false);
    expect(compiled('(?i)abc').matchesWhole('ABC')).toBe(true);
    expect(compiled('\\x{00E9}+').matchesWhole('éé')).toBe(true);
  });

  it('answers a value that backtracks for ever in RegExp', () => {
    const words = compiled('([A-Za-z]+ ?)*');
    expect(words.matchesWhole(`${'a'.repeat(40)}!`)).toBe(false);
    expect(words.matchesWhole('big brave world')).toBe(true);
  });

  it('is shared by every place that writes the same text, and shows nothing but its source', () => {
    expect(compiled('[a-z]+')).toBe(compiled('[a-z]+'));
    expect(Object.keys(compiled('[a-z]+'))).toEqual(['source']);
  });

  it('is the last rule a value meets: max-length first, so a long value is refused before the pattern reads it', () => {
    const rules: ParameterRules = { pattern: compiled('[a-z]+'), maxLength: 3, format: null };
    expect(ruleViolation(rules, 'abcd1')).toBe('is longer than 3 characters');
    expect(ruleViolation(rules, 'ab1')).toBe('does not have the expected form');
  });
});

describe('refused', () => {
  const cases: [string, string][] = [
    ['([a-z])\\1', 'a backreference "\\1"'],
    ['(?<c>[a-z])\\k<c>', 'a named backreference'],
    ['(?=.*[0-9])[a-z0-9]+', 'a lookahead "(?="'],
    ['(?![0-9])[a-z0-9]+', 'a lookahead "(?!"'],
    ['(?<=a)b', 'a lookbehind "(?<="'],
    ['(?<!a)b', 'a lookbehind "(?<!"'],
    ['(?>a+)b', 'an atomic group'],
    ['a*+b', 'a possessive quantifier "*+"'],
    ['[\\u00C0-\\u00FF]', 'a JavaScript "\\u" escape'],
    ['abc\\Z', '"\\Z"'],
    ['\\p{Script=Greek}', 'a Unicode property written with its name'],
  ];
  for (const [source, construct] of cases) {
    it(`names ${construct} in ${source}`, () => {
      const result = compileAuthorRegex(source);
      expect(result.kind).toBe('unsupported');
      expect(result.kind === 'unsupported' && result.construct).toContain(construct);
    });
  }

  it("gives RE2's reason for what is no regex in any dialect", () => {
    for (const source of ['[0-9', 'a**', '(a', 'a{1001}']) {
      const result = compileAuthorRegex(source);
      expect(result.kind, source).toBe('invalid');
    }
    expect(compileAuthorRegex('[0-9')).toEqual({ kind: 'invalid', reason: 'missing closing ] `[0-9`' });
  });
});
