// What dry-run shows of an endpoint's <signature> and <handshake>: each signature's scheme and
// the headers serve reads it from, the handshake serve answers itself, and, for a simulated
// request, that serve verifies the signature first and dry-run does not (a simulation has no
// sender's signature to check, and no clock of the sender's), and whether the request is the
// sender's verification handshake, which serve answers itself.

import type { WebhookChecks } from '../../compiler/ast.js';
import { answerHandshake, type HandshakeAnswer, type HandshakeRequest, type HandshakeScheme } from '../../webhooks/handshake.js';
import { isToken, type SignatureDescription } from '../../webhooks/signature-description.js';
import { formatDuration } from '../../units.js';
import type { RawBody } from '../../upload.js';
import type { ResponsePlan, WebhookCheck, WebhookPlan } from './model.js';

const NO_BYTES = Buffer.alloc(0);

export function describeWebhook(webhook: WebhookChecks | null): WebhookPlan | null {
  if (webhook === null) return null;
  return {
    signatures: (webhook.signatures ?? []).map((s) => ({
      scheme: s.scheme,
      headers: headersOf(s),
      checks: checksOf(s),
      tolerance: isToken(s) || s.toleranceMs === null ? null : formatDuration(s.toleranceMs),
    })),
    handshake: webhook.handshake?.scheme ?? null,
    checks: null,
  };
}

/**
 * The checks serve makes before anything else, in its order (a handshake the sender signs, Slack's
 * or Zoom's, after the signature; Meta's and Graph's before it), for a simulated request. No
 * signature is checked here; a simulated request that is the sender's verification request is
 * answered as serve answers it (`answered`: then nothing is bound and no task runs).
 */
export function simulateWebhook(plan: WebhookPlan, webhook: WebhookChecks, request: HandshakeRequest): SimulatedWebhook {
  const checks: WebhookCheck[] = [];
  if (plan.signatures.length > 0)
    checks.push({
      check: 'signature',
      outcome: 'not-checked',
      detail: `serve verifies ${plan.signatures.map((s) => `${s.scheme} (${s.checks})`).join(' or ')} over the raw body before anything else (401 when it fails); dry-run checks no signature`,
    });
  const handshake = webhook.handshake;
  if (handshake === null) return { checks, answer: null };
  const answer = answerHandshake(handshake, request);
  const check: WebhookCheck =
    answer.kind === 'answer'
      ? {
          check: 'handshake',
          outcome: 'answered',
          detail: `this is ${SENDER[handshake.scheme]}'s verification request: serve answers it itself, ${answer.status} ${answer.contentType}; no parameter is bound and no task runs`,
        }
      : answer.kind === 'refused'
        ? { check: 'handshake', outcome: 'refused', detail: `serve answers ${answer.status}: ${answer.detail}` }
        : {
            check: 'handshake',
            outcome: 'not-checked',
            detail: `not ${SENDER[handshake.scheme]}'s verification request, which serve would answer itself: a delivery`,
          };
  if (handshake.scheme === 'meta' || handshake.scheme === 'graph') checks.unshift(check);
  else checks.push(check);
  return { checks, answer: answer.kind === 'not-a-handshake' ? null : answer };
}

/** The checks, and the handshake's answer when the request is one: it ends the request. */
export interface SimulatedWebhook {
  readonly checks: WebhookCheck[];
  readonly answer: Exclude<HandshakeAnswer, { kind: 'not-a-handshake' }> | null;
}

/** What a plan shows as the response when serve answers the handshake itself. */
export function handshakeResponse(answer: NonNullable<SimulatedWebhook['answer']>, scheme: HandshakeScheme): ResponsePlan {
  const summary =
    answer.kind === 'answer'
      ? `the ${SENDER[scheme]} handshake's answer, written by serve (${answer.contentType})`
      : `problem details (application/problem+json), written by serve`;
  return { kind: 'body', status: answer.status, summary, expanded: null, condition: null, line: null, waitsFor: [] };
}

const SENDER: Readonly<Record<HandshakeScheme, string>> = { slack: 'Slack', zoom: 'Zoom', meta: 'Meta', graph: 'Microsoft Graph' };

/** The headers serve reads: the signature's, the timestamp's and the id's, then any other the template signs. */
function headersOf(signature: SignatureDescription): string[] {
  if (isToken(signature)) return [signature.header.name];
  const family = signature.families[0];
  const names = [family.signature.name];
  if (family.timestamp !== null) names.push(family.timestamp.name);
  if (family.id !== null) names.push(family.id.name);
  for (const part of signature.signed) if (part.kind === 'header' && !names.includes(part.header.name)) names.push(part.header.name);
  return names;
}

const VERIFIER_WORDS = { ed25519: 'Ed25519', 'ecdsa-p256': 'ECDSA P-256' } as const;

/** What serve checks, in words: the verifier, the signature's encoding, and the signed template. */
function checksOf(signature: SignatureDescription): string {
  if (isToken(signature)) return `the header equals the token`;
  const { verifier, format } = signature;
  const by = verifier.kind === 'hmac' ? `HMAC-${verifier.algorithm.toUpperCase()}` : VERIFIER_WORDS[verifier.kind];
  return `${by} (${format.encoding}) of ${signature.template}`;
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

/** The simulated request as a handshake sees it: a POST with --body, else a GET; the query is --param. */
export function simulatedHandshakeRequest(
  body: RawBody | null,
  query: HandshakeRequest['query'],
  headers: HandshakeRequest['headers'],
  json: unknown,
): HandshakeRequest {
  return {
    method: body === null ? 'GET' : 'POST',
    query,
    headers,
    body: body?.source.kind === 'buffer' ? body.source.content : NO_BYTES,
    ...(json === undefined ? {} : { json }),
  };
}
