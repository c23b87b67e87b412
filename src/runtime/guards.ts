// The checks of a public form that need a store or a network (rate limits, CAPTCHA
// verification), as the runtime sees them: an interface the server implements
// (server/guards.ts), so the runtime stays free of node:http, Redis and the verifiers.

import type { CaptchaRule, Endpoint, RateLimitRule } from '../compiler/ast.js';

/** The rule that refused, with the headers of the 429 (Retry-After and the IETF RateLimit fields). */
export interface LimitExceeded {
  readonly rule: RateLimitRule;
  readonly headers: Readonly<Record<string, string>>;
}

export type CaptchaVerdict =
  | { readonly ok: true }
  /** 403: missing or refused; 503: the verifier could not answer (fail closed, with Retry-After). */
  | { readonly ok: false; readonly status: 403 | 503; readonly detail: string; readonly reason: string };

/** What the log and the metrics are told; never a value of the request. */
export type GuardEvent =
  | { readonly check: 'honeypot'; readonly outcome: 'caught' }
  | { readonly check: 'rate-limit'; readonly outcome: 'limited' | 'store-unavailable' }
  | { readonly check: 'captcha'; readonly outcome: 'missing' | 'refused' | 'unavailable' };

/** One verification, the rule's templates expanded. */
export interface CaptchaRequest {
  readonly secret: string;
  readonly verifyUrl: string;
  readonly token: string;
  readonly clientIp: string;
  readonly requestId: string;
}

export interface Guards {
  /** Counts this request against each rule for its key; the first rule exceeded, or null (synchronously when counted in memory). */
  limit(endpoint: Endpoint, rules: readonly RateLimitRule[], key: (rule: RateLimitRule) => string, requestId: string): LimitExceeded | null | Promise<LimitExceeded | null>;
  /** Verifies `token` once (never cached) with the provider, or locally for altcha. */
  verifyCaptcha(rule: CaptchaRule, request: CaptchaRequest): Promise<CaptchaVerdict>;
  /** A new ALTCHA challenge, signed with `hmacKey`, as the widget asks for it (JSON). */
  altchaChallenge(hmacKey: string): Promise<string>;
  noted(endpoint: Endpoint, event: GuardEvent, requestId: string, fields?: Record<string, unknown>): void;
}
