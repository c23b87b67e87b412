// "Did you mean": the closest name within a few edits, and a bound on the work per run.
import { describe, expect, it } from 'vitest';
import { closest, levenshtein, Suggestions } from '../../src/compiler/suggest.js';

describe('closest', () => {
  it('suggests the nearest name within the limit, transpositions counting as one edit', () => {
    expect(closest('taks', ['task', 'tasks', 'success'])).toBe('task');
    expect(closest('HttpReqest', ['HttpRequest', 'Email'])).toBe('HttpRequest');
    expect(closest('SUCCESS', ['success', 'error'])).toBe('success');
  });

  it('suggests nothing far away, nor the name itself', () => {
    expect(closest('xyz', ['task', 'success'])).toBeUndefined();
    expect(closest('task', ['task'])).toBeUndefined();
    expect(closest('a', ['abcdefgh'])).toBeUndefined();
  });

  it('computes optimal string alignment distances', () => {
    expect(levenshtein('kitten', 'sitting')).toBe(3);
    expect(levenshtein('ab', 'ba')).toBe(1);
    expect(levenshtein('', 'abc')).toBe(3);
    expect(levenshtein('same', 'same')).toBe(0);
  });
});

describe('Suggestions', () => {
  it('gives the same answers as closest while its budget lasts, then none', () => {
    const names = Array.from({ length: 100 }, (_, i) => `name-${i}`);
    const suggestions = new Suggestions(250);
    expect(suggestions.closest('name-7x', names)).toBe(closest('name-7x', names));
    expect(suggestions.closest('nmae-42', names)).toBe('name-42');
    // 200 of 250 comparisons spent: the third pass would stop after 50 names, and a partial look
    // could offer a worse name (name-8 instead of name-98), so it offers none.
    expect(closest('nmae-98', names)).toBe('name-98');
    expect(closest('nmae-98', names.slice(0, 50))).toBe('name-8');
    expect(suggestions.closest('nmae-98', names)).toBeUndefined();
    expect(suggestions.closest('name-1x', names)).toBeUndefined();
  });
});
