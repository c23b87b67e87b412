// Condition semantics: both sides expanded, then split on the endpoint's separator keeping
// empty parts.

import type { Condition } from './types.js';
import { expandTemplate, type ExpansionScope } from './expand.js';

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

export function evaluateCondition(condition: Condition, scope: ExpansionScope, separator: string): boolean {
  const left = expandTemplate(condition.left, scope).split(separator);
  if (condition.kind === 'predicate') {
    const actual = condition.operator === 'isempty' ? left.every((v) => v === '') : left.length > 1;
    return actual === condition.expected;
  }
  const right = expandTemplate(condition.right, scope).split(separator);
  switch (condition.operator) {
    case 'equals':
      return left.some((v) => right.includes(v));
    case 'notequals':
      return !left.some((v) => right.includes(v));
    default: {
      const op = condition.operator;
      for (const l of left) {
        if (!DECIMAL.test(l.trim())) return false;
        for (const r of right) {
          if (!DECIMAL.test(r.trim())) return false;
          const a = Number(l);
          const b = Number(r);
          const holds = op === 'gt' ? a > b : op === 'ge' ? a >= b : op === 'lt' ? a < b : a <= b;
          if (!holds) return false;
        }
      }
      return true;
    }
  }
}
