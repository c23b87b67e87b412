// `if="TEMPLATE"` with exactly one operator, on <success>, <task> and attachments.

import type { ComparisonOperator, Condition } from '../template/types.js';
import type { CompileContext, ReadElement } from './context.js';
import { compileTemplate, type NameScope } from './templates.js';

export const CONDITION_ATTRIBUTES = ['if', 'equals', 'notequals', 'isempty', 'hasmultiple', 'gt', 'ge', 'lt', 'le'] as const;
const OPERATORS: ReadonlySet<string> = new Set(CONDITION_ATTRIBUTES.slice(1));
const COMPARISONS: ReadonlySet<string> = new Set(['equals', 'notequals', 'gt', 'ge', 'lt', 'le']);

/** null when the element has no condition; undefined when it has an invalid one (reported). */
export function compileCondition(ctx: CompileContext, read: ReadElement, scope: NameScope): Condition | null | undefined {
  const ifAttr = read.attr('if');
  // In document order, so a second operator is reported where it was written second.
  const operators = read.attributes.filter((a) => OPERATORS.has(a.name));
  if (!ifAttr && operators.length === 0) return null;
  if (!ifAttr) {
    ctx.diagnostics.report('invalid-condition', operators[0]!.position, `"${operators[0]!.name}" needs an "if" attribute holding the value to test`);
    return undefined;
  }
  if (operators.length !== 1) {
    ctx.diagnostics.report(
      'invalid-condition',
      operators.length === 0 ? ifAttr.position : operators[1]!.position,
      operators.length === 0
        ? `"if" needs exactly one operator: equals, notequals, isempty, hasmultiple, gt, ge, lt or le`
        : `"if" takes exactly one operator, but has ${operators.map((o) => `"${o.name}"`).join(' and ')}`,
    );
    return undefined;
  }
  const op = operators[0]!;
  const left = compileTemplate(ctx, ifAttr.value, 'none', scope, ifAttr.position);
  const text = `${ifAttr.value} ${op.name} ${JSON.stringify(op.value)}`;
  if (COMPARISONS.has(op.name)) {
    const right = compileTemplate(ctx, op.value, 'none', scope, op.position);
    if (!left || !right) return undefined;
    return { kind: 'compare', operator: op.name as ComparisonOperator, left, right, text };
  }
  if (op.value !== 'true' && op.value !== 'false') {
    ctx.diagnostics.report('invalid-value', op.position, `"${op.name}"`, op.value, '"true" or "false"');
    return undefined;
  }
  if (!left) return undefined;
  return { kind: 'predicate', operator: op.name as 'isempty' | 'hasmultiple', left, expected: op.value === 'true', text };
}

/** Template names a condition reads, for plans that must say when a condition cannot be decided without I/O. */
export function conditionUsesIntermediate(condition: Condition): boolean {
  const templates = condition.kind === 'compare' ? [condition.left, condition.right] : [condition.left];
  return templates.some((t) => t.parts.some((p) => p.kind === 'intermediate'));
}
