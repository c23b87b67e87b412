// Expansion with a check of the whole result, for values that a later step (node:http, SMTP)
// would refuse: the problem is blamed on the placeholder whose value holds it, so the request
// is refused with 400 naming that parameter; a problem in the text the author wrote blames no
// parameter (the configuration is at fault).

import { UnsafeValueError } from './escape.js';
import { expandTemplate, type ExpansionScope, type FilledRange } from './expand.js';
import type { Template } from './types.js';

/** What is wrong with an expanded value: `at` the offending character, `reason` a predicate without the value. */
export interface ValueProblem {
  readonly at: number;
  readonly reason: string;
}

/** Expands `template`; throws UnsafeValueError (`what` names the field in its message) when `check` finds a problem. */
export function expandChecked(template: Template, scope: ExpansionScope, what: string, check: (value: string) => ValueProblem | null): string {
  const value = expandTemplate(template, scope);
  const problem = check(value);
  if (problem === null) return value;
  // Only a refused value pays for knowing where each placeholder's value landed.
  const filled: FilledRange[] = [];
  expandTemplate(template, scope, filled);
  const culprit = filled.find((range) => problem.at >= range.start && problem.at < range.end);
  throw new UnsafeValueError(`${what} ${problem.reason}`, { reason: problem.reason, culprits: culprit === undefined ? [] : [culprit.part] });
}
