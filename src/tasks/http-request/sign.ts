// <sign scheme="standard" secret="…"/> on an HttpRequest task: a relay re-signs what it sends,
// so the receiver verifies it with any Standard Webhooks library. The secret is compiled (and,
// when its value is known, checked) once; each request derives the task's webhook-id, the same
// on every attempt of the task and, with <deduplicate>, on the sender's retry; each attempt
// signs with its own send time (send.ts).

import { createHash, type KeyObject } from 'node:crypto';
import { readElement, requireAttribute, type CompileContext, type ReadElement } from '../../compiler/context.js';
import { compileTemplate, ENV_ONLY_SCOPE } from '../../compiler/templates.js';
import type { Position } from '../../position.js';
import { expandTemplate, type ExpansionScope } from '../../template/expand.js';
import type { Template } from '../../template/types.js';
import { signStandardWebhook, standardSigningKey, type StandardWebhookHeaders } from '../../webhooks/sign.js';

export const SIGN_ELEMENT = 'sign';
export const SIGNING_SCHEMES = ['standard'] as const;

/** <sign>, compiled. */
export interface RelaySigning {
  readonly scheme: (typeof SIGNING_SCHEMES)[number];
  /** `whsec_` and base64; ${env:…} (a literal is a warning). */
  readonly secret: Template;
  readonly position: Position;
}

/** What an attempt signs with: the key, and the id every attempt of the task carries. */
export interface PreparedSigning {
  readonly key: KeyObject;
  readonly id: string;
}

/** The <sign> of a task: null when it has none, undefined after reporting a problem. */
export function compileSign(ctx: CompileContext, element: ReadElement['element']): RelaySigning | undefined {
  const r = readElement(ctx, element, { attributes: ['scheme', 'secret'], children: [] });
  const schemeAttr = requireAttribute(ctx, r, 'scheme');
  const secretAttr = requireAttribute(ctx, r, 'secret');
  let ok = schemeAttr !== undefined && secretAttr !== undefined;
  if (schemeAttr !== undefined && !(SIGNING_SCHEMES as readonly string[]).includes(schemeAttr.value)) {
    const suggestion = ctx.suggestions.closest(schemeAttr.value, SIGNING_SCHEMES);
    ctx.diagnostics.report(
      'invalid-value',
      schemeAttr.position,
      'scheme',
      schemeAttr.value,
      `"standard" (Standard Webhooks, which Svix receivers verify too)${suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`}`,
    );
    ok = false;
  }
  let secret: Template | null = null;
  if (secretAttr !== undefined) {
    const value = secretAttr.value.trim();
    if (!/^\$\{env:[^}]+\}$/.test(value)) ctx.diagnostics.report('secret-in-file', secretAttr.position, 'secret');
    secret = compileTemplate(ctx, value, 'none', ENV_ONLY_SCOPE, secretAttr.position);
    if (secret === null) ok = false;
    else {
      // Checked now whenever its value is known here: written in, or set in this environment.
      const known = secret.parts.every((p) => p.kind === 'literal' || (p.kind === 'env' && ctx.env[p.name] !== undefined));
      if (known && !standardSigningKey(expandTemplate(secret, { parameters: new Map(), system: NO_SYSTEM, env: ctx.env })).ok) {
        ctx.diagnostics.report('invalid-signing-secret', secretAttr.position);
        ok = false;
      }
    }
  }
  if (!ok || secret === null) return undefined;
  return { scheme: 'standard', secret, position: element.position };
}

const NO_SYSTEM = { 'request-id': '', endpoint: '', environment: '', 'client-ip': '', 'user-agent': '', 'base-url': '', 'body-sha256': '' };

/**
 * `msg_` and 32 hex characters from the request (or, with <deduplicate>, its delivery), the
 * endpoint and the task: the receiver deduplicates on it, so it stays the same for every attempt.
 */
export function webhookId(scope: ExpansionScope, taskId: string): string {
  const base = scope.delivery ?? scope.system['request-id'];
  return 'msg_' + createHash('sha256').update(`webhook-id\n${base}\n${scope.system.endpoint}\n${taskId}`).digest('hex').slice(0, 32);
}

/** How dry-run shows what each attempt adds beside its webhook-id. */
export const SIGNED_HEADERS_SHOWN = {
  'webhook-timestamp': '<unix time of each attempt>',
  'webhook-signature': 'v1,<HMAC-SHA256 of id.timestamp.body with the secret, per attempt>',
} as const;

/** Keys of the secrets seen, so each request does not decode its secret again. */
const KEYS = new Map<string, KeyObject>();
const MAX_KEYS = 64;

/** The signing of one request's task; throws (a failure of the task) when the secret is not a Standard Webhooks one. */
export function prepareSigning(signing: RelaySigning, scope: ExpansionScope, taskId: string): PreparedSigning {
  const secret = expandTemplate(signing.secret, scope);
  let key = KEYS.get(secret);
  if (key === undefined) {
    const made = standardSigningKey(secret);
    if (!made.ok) throw new Error(made.message);
    key = made.key;
    if (KEYS.size >= MAX_KEYS) KEYS.clear();
    KEYS.set(secret, key);
  }
  return { key, id: webhookId(scope, taskId) };
}

/** The headers of one attempt, sent at `now`. */
export function signAttempt(signing: PreparedSigning, now: number, body: Buffer): StandardWebhookHeaders {
  return signStandardWebhook(signing.key, signing.id, now, body);
}
