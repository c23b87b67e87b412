// What dry-run shows of an endpoint's <deduplicate>: the key as written and its window, and for a
// simulated request the key it expands to. Nothing is claimed or remembered in a simulation, so
// the plan says the request is not checked against earlier ones; the tasks are shown with the
// downstream keys (Idempotency-Key, webhook-id) serve would derive from that key.

import type { Endpoint } from '../../compiler/ast.js';
import { deliveryId, withDelivery } from '../../runtime/deduplication.js';
import type { Decision } from '../../runtime/decision.js';
import { expandTemplate } from '../../template/expand.js';
import { formatAge } from '../../units.js';
import type { DeduplicationPlan } from './model.js';

export const NOT_CHECKED = 'deduplication is not checked in a simulation: dry-run remembers no earlier request';

export function describeDeduplication(endpoint: Endpoint): DeduplicationPlan | null {
  const rule = endpoint.deduplicate;
  if (rule === null) return null;
  return { key: rule.key.source, for: formatAge(rule.forMs), expanded: null, note: NOT_CHECKED };
}

/** The plan with the simulated key, and the decision with the delivery serve's tasks would derive their keys from. */
export function simulateDeduplication(
  endpoint: Endpoint,
  plan: DeduplicationPlan | null,
  decision: Decision,
): { plan: DeduplicationPlan | null; decision: Decision } {
  if (plan === null || decision.kind !== 'proceed') return { plan, decision };
  const expanded = expandTemplate(endpoint.deduplicate!.key, decision.scope).trim();
  const id = deliveryId(endpoint, decision);
  return { plan: { ...plan, expanded }, decision: id === null ? decision : withDelivery(decision, id) };
}

/** One line for people. */
export function deduplicationSummary(plan: DeduplicationPlan): string {
  return `key ${plan.key} for ${plan.for}`;
}

/** The simulated request's key, for people: null without a simulation. */
export function deduplicationDetail(plan: DeduplicationPlan): string | null {
  if (plan.expanded === null) return null;
  if (plan.expanded === '') return 'the key is blank for this request: it is not deduplicated, and runs every time';
  return `key "${plan.expanded}": a repeat within ${plan.for} would get this request's success again (Idempotent-Replayed: true) and run nothing; ${NOT_CHECKED}`;
}
