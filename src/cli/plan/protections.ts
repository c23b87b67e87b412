// What dry-run shows of an endpoint's <honeypot>, <captcha> and <rate-limit>: the rules as
// written, and for a simulated request which check serve would make and what it would decide
// without I/O. No verifier is called and no count is kept: a check that needs one says so.

import type { Protections, RateLimitRule } from '../../compiler/ast.js';
import type { RawParameters } from '../../runtime/parameters.js';
import { formatDuration } from '../../units.js';
import type { ProtectionCheck, ProtectionPlan } from './model.js';
import { rateLimitKey } from '../../runtime/rate-limit-key.js';

export function describeProtections(protections: Protections | null): ProtectionPlan | null {
  if (protections === null) return null;
  const captcha = protections.captcha;
  return {
    honeypot: protections.honeypot,
    captcha:
      captcha === null
        ? null
        : { provider: captcha.provider, parameter: captcha.parameter, minScore: captcha.minScore, verifyUrl: captcha.provider === 'altcha' ? null : captcha.verifyUrl.source },
    rateLimits: [...protections.limitsByClient, ...protections.limitsByParameter].map((rule) => ({
      requests: rule.requests,
      per: formatDuration(rule.perMs),
      by: byOf(rule),
      burst: rule.burst,
    })),
    checks: null,
  };
}

/** The checks in serve's order, for a request with `raw` whose parameters `bound` (null: refused before). */
export function simulateProtections(protections: Protections, raw: RawParameters, bound: ReadonlyMap<string, string> | null, clientIp: string): ProtectionCheck[] {
  const checks: ProtectionCheck[] = [];
  for (const rule of protections.limitsByClient) checks.push(limitCheck(rule, clientIp));
  if (bound === null) return checks;
  if (protections.honeypot !== null) {
    const filled = (raw.get(protections.honeypot) ?? []).some((v) => v !== '');
    checks.push({
      check: 'honeypot',
      outcome: filled ? 'caught' : 'passes',
      detail: filled ? `"${protections.honeypot}" is filled: answered as the success would be, and no task runs` : `"${protections.honeypot}" is empty`,
    });
    if (filled) return checks;
  }
  for (const rule of protections.limitsByParameter) checks.push(limitCheck(rule, rateLimitKey(bound.get(rule.byParameter!) ?? '')));
  const captcha = protections.captcha;
  if (captcha !== null) {
    const token = raw.get(captcha.parameter)?.[0]?.trim() ?? '';
    if (token === '') checks.push({ check: 'captcha', outcome: 'refused', detail: `no "${captcha.parameter}" field: answered 403 before anything runs` });
    else {
      const where = captcha.provider === 'altcha' ? 'checked by the service' : `sent to ${captcha.verifyUrl.source}`;
      checks.push({ check: 'captcha', outcome: 'not-checked', detail: `the ${captcha.provider} token would be ${where}; dry-run verifies nothing` });
    }
  }
  return checks;
}

function limitCheck(rule: RateLimitRule, key: string): ProtectionCheck {
  return {
    check: 'rate-limit',
    outcome: 'not-checked',
    detail: `counts against ${rule.requests} per ${formatDuration(rule.perMs)} for ${rule.byParameter === null ? 'client' : `${rule.byParameter}`} "${key}"; dry-run keeps no count`,
  };
}

function byOf(rule: RateLimitRule): string {
  return rule.byParameter === null ? 'client-ip' : `parameter:${rule.byParameter}`;
}

/** One line for people and graph labels. */
export function protectionSummary(plan: ProtectionPlan): string {
  const parts: string[] = [];
  if (plan.honeypot !== null) parts.push(`honeypot "${plan.honeypot}"`);
  if (plan.captcha !== null) parts.push(`captcha ${plan.captcha.provider} ("${plan.captcha.parameter}"${plan.captcha.minScore === null ? '' : `, min-score ${plan.captcha.minScore}`})`);
  for (const l of plan.rateLimits) parts.push(`rate limit ${l.requests} per ${l.per} by ${l.by}${l.burst > 0 ? ` (+${l.burst} burst)` : ''}`);
  return parts.join('; ');
}
