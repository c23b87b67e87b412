// The request path of <signature> and <handshake> (docs/behaviour.md, "Receiving webhooks"):
// once the body is read, before the environment, the hash and the parameters. A handshake the
// sender does not sign (Meta's GET, Microsoft Graph's validation) is answered first; then the
// signatures are verified over the raw bytes (any one verifying lets the request on); then a
// handshake the sender signs (Slack's, Zoom's) is answered. A refusal is a 401 problem+json
// that names what failed and quotes nothing that was sent, a count in
// endpoint_service_webhook_refusals_total and a log line with the reason.

import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import type { Endpoint, WebhookChecks } from '../compiler/ast.js';
import type { RawBody } from '../upload.js';
import { answerHandshake, type HandshakeAnswer } from '../webhooks/handshake.js';
import type { RefusalReason, RequestHeaders } from '../webhooks/signature-description.js';
import { verifySignatures } from '../webhooks/verify-signature.js';
import { verifyZoom } from '../webhooks/verify-zoom.js';
import type { Logger } from './log.js';
import type { ServiceMetrics } from './metrics.js';
import { writeBody, writeProblem } from './write-response.js';

/** The `reason` label of a refusal: a signature's, or a handshake that is not one a sender would send. */
export type WebhookRefusalReason = RefusalReason | 'invalid-handshake';

/** What the checks decided: go on with the request, or this answer ends it. */
export type WebhookVerdict =
  | { readonly kind: 'pass' }
  | { readonly kind: 'answer'; readonly status: 200; readonly contentType: string; readonly body: string; readonly scheme: string }
  | { readonly kind: 'refused'; readonly status: 400 | 401 | 403; readonly reason: WebhookRefusalReason; readonly detail: string };

const PASS: WebhookVerdict = Object.freeze({ kind: 'pass' });
const EMPTY = Buffer.alloc(0);

/** What the checks read of one request. */
export interface WebhookRequest {
  readonly method: string;
  /** The full URL the sender used, for a signature's {url} (server/http.ts, requestUrl). */
  readonly url?: string | undefined;
  /** The query string's values, without a form body's. */
  readonly query: ReadonlyMap<string, readonly string[]>;
  readonly headers: RequestHeaders;
  /** The raw body's bytes as received (empty without a body). */
  readonly body: Buffer;
  /** The body's parsed JSON document, when the server parsed one. */
  readonly json?: unknown;
}

/** The checks, pure but for the clock: the verdict for `request` against the endpoint's `<signature>` and `<handshake>`. */
export function checkWebhook(checks: WebhookChecks, request: WebhookRequest, now: number | null): WebhookVerdict {
  const handshake = checks.handshake;
  const unsigned = handshake !== null && (handshake.scheme === 'meta' || handshake.scheme === 'graph');
  if (unsigned) {
    const answer = answerHandshake(handshake, request);
    if (answer.kind !== 'not-a-handshake') return handshakeVerdict(answer, handshake.scheme);
  }
  if (checks.signatures !== null) {
    const verified = verifySignatures(checks.signatures, request, now);
    if (!verified.ok) return refusal(verified.reason, verified.detail);
  }
  if (handshake === null || unsigned) return PASS;
  const answer = answerHandshake(handshake, request);
  if (answer.kind === 'not-a-handshake') return PASS;
  if (handshake.scheme === 'zoom' && answer.kind === 'answer') {
    const verified = verifyZoom(handshake.key, request, now);
    if (!verified.ok) return refusal(verified.reason, verified.detail);
  }
  return handshakeVerdict(answer, handshake.scheme);
}

function refusal(reason: RefusalReason, detail: string): WebhookVerdict {
  return { kind: 'refused', status: 401, reason, detail: `the webhook signature does not verify: ${detail}` };
}

function handshakeVerdict(answer: Exclude<HandshakeAnswer, { kind: 'not-a-handshake' }>, scheme: string): WebhookVerdict {
  if (answer.kind === 'answer') return { kind: 'answer', status: 200, contentType: answer.contentType, body: answer.body, scheme };
  return { kind: 'refused', status: answer.status, reason: 'invalid-handshake', detail: answer.detail };
}

/** The bytes of a kept raw body: in memory, or read back from its temporary file (a body larger than 64 KiB). */
export function rawBytes(body: RawBody | null): Buffer | Promise<Buffer> {
  if (body === null) return EMPTY;
  return body.source.kind === 'buffer' ? body.source.content : readFile(body.source.path);
}

/** Counts and logs a verdict that ends the request, and writes its answer; false for `pass`, and nothing is done. */
export function answerWebhook(
  verdict: WebhookVerdict,
  endpoint: Endpoint,
  response: ServerResponse,
  requestId: string,
  metrics: ServiceMetrics,
  logger: Logger,
): boolean {
  if (verdict.kind === 'pass') return false;
  if (verdict.kind === 'answer') {
    logger.log('info', 'handshake answered', { requestId, endpoint: endpoint.name, handshake: verdict.scheme });
    // A challenge is good for one verification: a cache must not answer the next with it.
    response.setHeader('cache-control', 'no-store');
    writeBody(response, verdict.status, verdict.contentType, verdict.body);
    return true;
  }
  metrics.webhookRefused(endpoint.name, verdict.reason);
  logger.log('warn', 'webhook refused', { requestId, endpoint: endpoint.name, reason: verdict.reason, detail: verdict.detail });
  writeProblem(response, verdict.status, verdict.detail, requestId);
  return true;
}
