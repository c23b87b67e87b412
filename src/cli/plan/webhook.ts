// What dry-run shows of an endpoint's <signature> and <handshake>: each signature's scheme and
// the headers serve reads it from, the handshake serve answers itself, and, for a simulated
// request, that serve verifies the signature first and dry-run does not (a simulation has no
// sender's signature to check, and no clock of the sender's).

import type { WebhookChecks } from '../../compiler/ast.js';
import type { SignatureDescription } from '../../webhooks/signature-description.js';
import { formatDuration } from '../../units.js';
import type { WebhookCheck, WebhookPlan } from './model.js';

export function describeWebhook(webhook: WebhookChecks | null): WebhookPlan | null {
  if (webhook === null) return null;
  return {
    signatures: (webhook.signatures ?? []).map((s) => ({
      scheme: s.scheme,
      headers: headersOf(s),
      tolerance: 'toleranceMs' in s ? formatDuration(s.toleranceMs) : null,
    })),
    handshake: webhook.handshake?.scheme ?? null,
    checks: null,
  };
}

/**
 * The checks serve makes before anything else, in its order (a handshake the sender signs, Slack's
 * or Zoom's, after the signature; Meta's and Graph's before it), for a simulated request: none of
 * them is made here.
 */
export function simulateWebhook(plan: WebhookPlan): WebhookCheck[] {
  const checks: WebhookCheck[] = [];
  if (plan.signatures.length > 0)
    checks.push({
      check: 'signature',
      outcome: 'not-checked',
      detail: `serve verifies ${plan.signatures.map((s) => s.scheme).join(' or ')} over the raw body before anything else (401 when it fails); dry-run checks no signature`,
    });
  if (plan.handshake !== null) {
    const handshake: WebhookCheck = {
      check: 'handshake',
      outcome: 'not-checked',
      detail: `a ${plan.handshake} verification request would be answered by serve itself, binding nothing and running no task; dry-run simulates a delivery`,
    };
    if (plan.handshake === 'meta' || plan.handshake === 'graph') checks.unshift(handshake);
    else checks.push(handshake);
  }
  return checks;
}

function headersOf(signature: SignatureDescription): string[] {
  switch (signature.scheme) {
    case 'github':
      return ['X-Hub-Signature-256'];
    case 'stripe':
      return ['Stripe-Signature'];
    case 'slack':
      return ['X-Slack-Signature', 'X-Slack-Request-Timestamp'];
    case 'shopify':
      return ['X-Shopify-Hmac-Sha256'];
    case 'standard':
      return ['webhook-id', 'webhook-timestamp', 'webhook-signature'];
    case 'hmac':
    case 'token':
      return [signature.header.name];
  }
}

/** One line for people and graph labels. */
export function webhookSummary(plan: WebhookPlan): string {
  const parts: string[] = [];
  if (plan.signatures.length > 0) {
    const each = plan.signatures.map((s) => `${s.scheme} (${s.headers.join(', ')}${s.tolerance === null ? '' : `; tolerance ${s.tolerance}`})`);
    parts.push(`signature ${each.join(' or ')}`);
  }
  if (plan.handshake !== null) parts.push(`handshake ${plan.handshake}`);
  return parts.join('; ');
}
