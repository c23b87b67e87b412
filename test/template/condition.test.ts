// evaluateCondition, exactly: both sides expanded, split on the endpoint's separator keeping
// empty parts (an empty value is one empty part); equals holds when any left value is among the
// right values, notequals when none is; isempty when every left value is empty; hasmultiple
// when there is more than one; gt/ge/lt/le compare every pair as decimals and are false when
// any side is empty or not a number.
import { describe, expect, it } from 'vitest';
import type { Condition, Template, TemplatePart } from '../../src/template/types.js';
import { evaluateCondition } from '../../src/template/condition.js';
import type { ExpansionScope } from '../../src/template/expand.js';

const SYSTEM = { 'request-id': 'r', endpoint: 'e', environment: 'live', 'client-ip': '', 'user-agent': '', 'base-url': '', 'body-sha256': '' } as const;

/** A template that is just the parameter `name` (so the tested value comes from the scope, as in a request). */
const p = (name: string): Template => ({ source: `\${${name}}`, escaping: 'none', parts: [{ kind: 'parameter', name } as TemplatePart] });

function holds(operator: 'equals' | 'notequals' | 'gt' | 'ge' | 'lt' | 'le', left: string, right: string, separator = '||'): boolean {
  const c: Condition = { kind: 'compare', operator, left: p('l'), right: p('r'), text: '' };
  return evaluateCondition(
    c,
    {
      parameters: new Map([
        ['l', left],
        ['r', right],
      ]),
      system: SYSTEM,
      env: {},
    } as ExpansionScope,
    separator,
  );
}
function predicate(operator: 'isempty' | 'hasmultiple', left: string, expected = true, separator = '||'): boolean {
  const c: Condition = { kind: 'predicate', operator, left: p('l'), expected, text: '' };
  return evaluateCondition(c, { parameters: new Map([['l', left]]), system: SYSTEM, env: {} } as ExpansionScope, separator);
}

describe('equals / notequals', () => {
  it('equals: any left value among the right values', () => {
    expect(holds('equals', 'yes', 'yes')).toBe(true);
    expect(holds('equals', 'yes', 'Yes')).toBe(false); // case-sensitive
    expect(holds('equals', 'a||b', 'b')).toBe(true);
    expect(holds('equals', 'c', 'a||b||c')).toBe(true);
    expect(holds('equals', 'a||b', 'c||d')).toBe(false);
  });

  it('notequals: no left value among the right values', () => {
    expect(holds('notequals', 'a||b', 'b')).toBe(false);
    expect(holds('notequals', 'a||b', 'c')).toBe(true);
    expect(holds('notequals', 'x', 'a||x')).toBe(false);
  });

  it('keeps empty parts: an empty value is one empty part', () => {
    expect(holds('equals', '', '')).toBe(true);
    expect(holds('equals', 'a||', '')).toBe(true); // trailing empty part
    expect(holds('equals', '||a', 'b||')).toBe(true); // empty on both sides
    expect(holds('notequals', '', 'x')).toBe(true);
    expect(holds('notequals', 'a||', 'b')).toBe(true);
  });

  it('splits on the endpoint separator only', () => {
    expect(holds('equals', 'a,b', 'b', ',')).toBe(true);
    expect(holds('equals', 'a,b', 'b')).toBe(false); // "a,b" is one value with ||
    expect(holds('equals', 'a||b', 'b', ',')).toBe(false);
  });
});

describe('isempty / hasmultiple', () => {
  it('isempty="true" when every left value is empty', () => {
    expect(predicate('isempty', '')).toBe(true);
    expect(predicate('isempty', '||')).toBe(true);
    expect(predicate('isempty', ' ')).toBe(false);
    expect(predicate('isempty', 'a||')).toBe(false);
  });

  it('isempty="false" is the negation', () => {
    expect(predicate('isempty', '', false)).toBe(false);
    expect(predicate('isempty', 'a', false)).toBe(true);
  });

  it('hasmultiple="true" when there is more than one left value, empty ones included', () => {
    expect(predicate('hasmultiple', 'a')).toBe(false);
    expect(predicate('hasmultiple', '')).toBe(false);
    expect(predicate('hasmultiple', 'a||b')).toBe(true);
    expect(predicate('hasmultiple', '||')).toBe(true);
    expect(predicate('hasmultiple', 'a,b', true, ',')).toBe(true);
    expect(predicate('hasmultiple', 'a||b', false)).toBe(false);
    expect(predicate('hasmultiple', 'a', false)).toBe(true);
  });
});

describe('gt / ge / lt / le', () => {
  it('compares as decimal numbers, not as text', () => {
    expect(holds('gt', '10', '9')).toBe(true); // "10" < "9" as text
    expect(holds('lt', '9', '10')).toBe(true);
    expect(holds('gt', '1.5', '1.25')).toBe(true);
    expect(holds('lt', '-2', '-1')).toBe(true);
    expect(holds('gt', '.5', '0')).toBe(true);
  });

  it('distinguishes strict and non-strict at equality', () => {
    expect(holds('gt', '5', '5')).toBe(false);
    expect(holds('ge', '5', '5.0')).toBe(true);
    expect(holds('lt', '5', '5')).toBe(false);
    expect(holds('le', '5', '5')).toBe(true);
  });

  it('holds only when every pair holds', () => {
    expect(holds('gt', '5||7', '4')).toBe(true);
    expect(holds('gt', '5||3', '4')).toBe(false);
    expect(holds('lt', '1', '2||3')).toBe(true);
    expect(holds('lt', '1', '2||0')).toBe(false);
    expect(holds('ge', '3||4', '1||3')).toBe(true);
    expect(holds('le', '3||4', '4||5')).toBe(true);
    expect(holds('le', '3||6', '4||5')).toBe(false);
  });

  it('is false when any side is empty or not a number, whatever the operator', () => {
    for (const op of ['gt', 'ge', 'lt', 'le'] as const) {
      expect(holds(op, '', '1')).toBe(false);
      expect(holds(op, '1', '')).toBe(false);
      expect(holds(op, 'abc', '1')).toBe(false);
      expect(holds(op, '1', 'abc')).toBe(false);
      expect(holds(op, '1||', '0')).toBe(false); // an empty part
      expect(holds(op, '1||x', '1')).toBe(false);
      expect(holds(op, 'NaN', '1')).toBe(false);
      expect(holds(op, 'Infinity', '1')).toBe(false);
      expect(holds(op, '0x10', '1')).toBe(false); // not a decimal
    }
  });
});
