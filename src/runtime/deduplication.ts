// <deduplicate>: a delivery the sender repeats runs once (docs/language.md, "<deduplicate>";
// docs/webhooks.md, "Deduplicating deliveries"). The request is decided first (its parameters bound, so
// the key can be expanded), then its key is claimed in the store: the first request with a key
// runs, and its success is remembered for `for`; a repeat is answered with that answer, a
// request while the first still runs gets 409, the same key with another body or query 422. A
// failure releases the key, so the sender's retry runs. The store (memory, the cluster primary,
// or Redis) is the server's: here it is an interface, so the runtime stays free of node:http
// and Redis.

import { createHash } from 'node:crypto';
import type { Endpoint } from '../compiler/ast.js';
import { expandTemplate } from '../template/expand.js';
import type { Decision } from './decision.js';
import type { RememberedAnswer, RuntimeResponse } from './response.js';

export type { RememberedAnswer } from './response.js';

/** A body up to this size is remembered with its answer. */
export const REMEMBERED_BODY_BYTES = 64 * 1024;

/** What the store holds for a key when the request comes. */
export type Claim =
  /** Nobody had it: this request runs, and holds the key under `token`. */
  | { readonly kind: 'claimed'; readonly token: string }
  /** A success is remembered. */
  | { readonly kind: 'done'; readonly fingerprint: string; readonly answer: RememberedAnswer }
  /** The first request with the key is still running. */
  | { readonly kind: 'running'; readonly fingerprint: string }
  /** The store could not answer: the request runs without deduplication (fail open). */
  | { readonly kind: 'unavailable'; readonly reason: string };

export type DeduplicationOutcome = 'replayed' | 'in-flight' | 'mismatch' | 'store-down';

/**
 * The record of keys for every process and instance of the service. `complete`, `release` and
 * `renew` never reject: a store that cannot take them lets the claim expire by itself (LEASE_MS).
 */
export interface DeduplicationStore {
  claim(id: string, fingerprint: string, leaseMs: number): Promise<Claim>;
  /** Keeps a running claim from expiring. */
  renew(id: string, token: string, leaseMs: number): Promise<void>;
  /** The request succeeded: remember its answer for `forMs`. `endpoint`: whose answers it counts among, where a store bounds them per endpoint. */
  complete(id: string, token: string, fingerprint: string, answer: RememberedAnswer, forMs: number, endpoint?: string): Promise<void>;
  /** The request failed: forget the key, so a retry runs. */
  release(id: string, token: string): Promise<void>;
  /**
   * Claim and completion at once, for an answer known before anything runs: `claimed` when it is
   * now remembered for `forMs`, else what the store held (or `unavailable`).
   */
  remember(id: string, fingerprint: string, answer: RememberedAnswer, forMs: number, endpoint?: string): Promise<Claim>;
  /** The metric and the log line of an outcome (never the key's value). */
  noted(endpoint: Endpoint, outcome: DeduplicationOutcome, requestId: string, fields?: Record<string, unknown>): void;
}

/**
 * How long a claim lives without being renewed: a process that dies while running a request
 * leaves its key to expire within this, rather than answering 409 for the whole window.
 */
export const LEASE_MS = 30_000;
const RENEW_EVERY_MS = 10_000;

/**
 * The id the store keeps for a request's key: the endpoint and the expanded key, hashed (keys
 * are per endpoint, and a value of any length or character becomes 64 hex). null when the key
 * expands blank: that request is not deduplicated.
 */
export function deliveryId(endpoint: Endpoint, decision: Decision & { kind: 'proceed' }): string | null {
  const key = deduplicationKey(endpoint, decision);
  return key === null ? null : deliveryIdOf(endpoint, key);
}

/** The expanded key of a request (what the sender sent, such as a delivery GUID); null when it expands blank. */
export function deduplicationKey(endpoint: Endpoint, decision: Decision & { kind: 'proceed' }): string | null {
  const key = expandTemplate(endpoint.deduplicate!.key, decision.scope).trim();
  return key === '' ? null : key;
}

export function deliveryIdOf(endpoint: Endpoint, key: string): string {
  return createHash('sha256').update(`${endpoint.name}\n${key}`).digest('hex');
}

/** SHA-256 of the query string and the raw body's digest: the same key with another request is a mismatch. */
export function requestFingerprint(query: string, bodyDigest: string): string {
  return createHash('sha256').update(`${query}\n${bodyDigest}`).digest('hex');
}

/**
 * The decision with `delivery` in the scope of every endpoint of its forward chain: their tasks
 * derive their Idempotency-Key and webhook-id from it, so a retry sends the same keys downstream.
 */
export function withDelivery(decision: Decision, delivery: string): Decision {
  if (decision.kind !== 'proceed') return decision;
  const response =
    decision.response?.kind === 'forward' ? { kind: 'forward' as const, target: withDelivery(decision.response.target, delivery) } : decision.response;
  return { ...decision, scope: { ...decision.scope, delivery }, response };
}

/** A success (2xx, 3xx) is remembered; anything else releases the key. */
export function remembers(status: number): boolean {
  return status >= 200 && status < 400;
}

/** What is remembered of an answer, or null when it is not a success; `requestId`: the request that got it first. */
export function rememberedAnswer(response: RuntimeResponse, requestId: string): RememberedAnswer | null {
  if (!remembers(response.status)) return null;
  switch (response.kind) {
    case 'empty':
      return { status: response.status, location: null, contentType: null, body: '', requestId };
    case 'redirect':
      return { status: response.status, location: response.location, contentType: null, body: '', requestId };
    case 'body':
      return {
        status: response.status,
        location: null,
        contentType: response.contentType,
        body: Buffer.byteLength(response.body) <= REMEMBERED_BODY_BYTES ? response.body : '',
        requestId,
      };
    case 'file':
    case 'stream':
      // Sent as it is read: its bytes are not held to be remembered.
      return { status: response.status, location: null, contentType: response.contentType, body: '', requestId };
    case 'replay':
      return response.answer;
    case 'problem':
      return null;
  }
}

/** 409 while the first request with the key runs. */
export const IN_FLIGHT: RuntimeResponse = {
  kind: 'problem',
  status: 409,
  detail: 'a request with the same deduplication key is still being processed; try again shortly',
  headers: { 'retry-after': '1' },
};

/** 422: the key was used for another request. */
export const MISMATCH: RuntimeResponse = {
  kind: 'problem',
  status: 422,
  detail: 'the deduplication key was already used for a request with another body or query',
};

/**
 * The claims this process holds while their requests run, renewed every RENEW_EVERY_MS by one
 * timer for all of them (a timer per request cost more than the rest of the claim).
 */
const held = new Map<DeduplicationStore, Map<string, string>>();
let renewing: NodeJS.Timeout | null = null;

/** Keeps `token` renewed until the returned function is called. */
export function keepClaimed(store: DeduplicationStore, id: string, token: string): () => void {
  let claims = held.get(store);
  if (claims === undefined) held.set(store, (claims = new Map()));
  claims.set(id, token);
  if (renewing === null) {
    renewing = setInterval(() => {
      for (const [s, c] of held) for (const [i, t] of c) void s.renew(i, t, LEASE_MS);
    }, RENEW_EVERY_MS);
    renewing.unref();
  }
  return () => {
    if (claims.get(id) === token) claims.delete(id);
    if (claims.size === 0) held.delete(store);
    // Nothing left to renew: no timer ticks for an idle process.
    if (held.size === 0 && renewing !== null) {
      clearInterval(renewing);
      renewing = null;
    }
  };
}

/** The success a decision answers without any task, I/O or check still to make; null otherwise. */
function decidedAnswer(endpoint: Endpoint, decision: Decision, requestId: string): RememberedAnswer | null {
  if (decision.kind !== 'proceed' || decision.tasks.length > 0 || decision.response?.kind !== 'respond') return null;
  if (endpoint.protections?.afterBinding === true) return null;
  return rememberedAnswer(decision.response.response, requestId);
}

/** What the pipeline answers (PipelineResult, named here so the pipeline can import this module). */
export interface Answered {
  readonly response: RuntimeResponse;
  readonly outcome: 'success' | 'error';
  /**
   * For the delivery log, what the status alone does not tell: `spam` (the honeypot or the
   * CAPTCHA caught it), `duplicate` (answered for the deduplication key's first request).
   */
  readonly classified?: 'spam' | 'duplicate';
  /** A duplicate's first request, when the store remembers it. */
  readonly replayOf?: string;
  /** The expanded <deduplicate> key of a deduplicated request. */
  readonly deduplicationKey?: string;
}

/**
 * Runs `decision` once for its delivery id `id`: claims it, runs it, and remembers its success
 * or releases the key; answers a repeat from the store without running anything.
 */
export async function runDeduplicated(
  store: DeduplicationStore,
  endpoint: Endpoint,
  id: string,
  fingerprint: string,
  requestId: string,
  decision: Decision,
  run: (decision: Decision) => Answered | Promise<Answered>,
): Promise<Answered> {
  const rule = endpoint.deduplicate!;
  // Nothing to run and the answer already decided (no task, no I/O, no check still to make):
  // it is remembered as it is claimed, one round trip, and there is no running to wait for.
  const known = decidedAnswer(endpoint, decision, requestId);
  const claim = known !== null ? await store.remember(id, fingerprint, known, rule.forMs, endpoint.name) : await store.claim(id, fingerprint, LEASE_MS);
  if (known !== null && claim.kind === 'claimed') return run(decision);
  switch (claim.kind) {
    case 'done':
      if (claim.fingerprint !== fingerprint) {
        store.noted(endpoint, 'mismatch', requestId);
        return { response: MISMATCH, outcome: 'error', classified: 'duplicate' };
      }
      store.noted(endpoint, 'replayed', requestId, { status: claim.answer.status });
      return {
        response: { kind: 'replay', status: claim.answer.status, answer: claim.answer },
        outcome: 'success',
        classified: 'duplicate',
        ...(claim.answer.requestId !== undefined ? { replayOf: claim.answer.requestId } : {}),
      };
    case 'running':
      store.noted(endpoint, claim.fingerprint !== fingerprint ? 'mismatch' : 'in-flight', requestId);
      return { response: claim.fingerprint !== fingerprint ? MISMATCH : IN_FLIGHT, outcome: 'error', classified: 'duplicate' };
    case 'unavailable':
      // Fail open: the delivery runs (its downstream keys still derived from the key).
      store.noted(endpoint, 'store-down', requestId, { reason: claim.reason });
      return run(withDelivery(decision, id));
    case 'claimed':
      break;
  }
  const stop = keepClaimed(store, id, claim.token);
  let result: Answered;
  try {
    result = await run(withDelivery(decision, id));
  } catch (error) {
    stop();
    await store.release(id, claim.token);
    throw error;
  }
  stop();
  const answer = result.outcome === 'success' ? rememberedAnswer(result.response, requestId) : null;
  if (answer !== null) await store.complete(id, claim.token, fingerprint, answer, rule.forMs, endpoint.name);
  else await store.release(id, claim.token);
  return result;
}
