// Rate limits and CAPTCHA verification for one serving process (runtime/guards.ts says what).
//
// Rate limits count with rate-limiter-flexible: in memory in a single process; with --workers N
// through the primary (RateLimiterCluster, one count for the whole service); with
// --rate-limit-store redis://… in Redis, one count for every instance sharing it (the client is
// shared-state.ts's: every command bounded). When Redis cannot be reached or does not answer
// in time the request is let through (fail open), logged and counted: a store outage must not
// take a contact form down with it. CAPTCHA tokens are verified with one POST to the
// provider's siteverify (got, 5 s, no retry): a verifier that cannot answer refuses the request
// (fail closed, 503).

import cluster from 'node:cluster';
import { createRequire } from 'node:module';
import type { Got } from 'got';
import type { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
type Library = typeof import('rate-limiter-flexible');

/**
 * rate-limiter-flexible's MemoryStorage, a module it does not export: its limiters answer with a
 * promise, and a single process counts synchronously on this store.
 * test/architecture/pinned-internals.test.ts fails when an upgrade moves it or changes what
 * incrby answers.
 */
export const MEMORY_STORAGE_MODULE = 'rate-limiter-flexible/lib/component/MemoryStorage/MemoryStorage.js';

/** rate-limiter-flexible's MemoryStorage, which has no typings: a fixed window per key. */
interface MemoryStorage {
  incrby(key: string, value: number, durationSec: number): Pick<RateLimiterRes, 'consumedPoints' | 'msBeforeNext' | 'remainingPoints'>;
}
import type { Application, CaptchaRule, Endpoint, RateLimitRule } from '../compiler/ast.js';
import type { CaptchaRequest, CaptchaVerdict, GuardEvent, Guards, LimitExceeded } from '../runtime/guards.js';
import { describeError } from '../errors.js';
import { formatDuration, formatSize } from '../units.js';
import type { Logger } from './log.js';
import type { ServiceMetrics } from './metrics.js';
import { openSharedState } from './shared-state.js';
import { USER_AGENT } from '../user-agent.js';

export const CAPTCHA_TIMEOUT_MS = 5000;
/** A siteverify answer is a few hundred bytes; more is not read (and counts as no answer). */
export const CAPTCHA_ANSWER_LIMIT = 64 * 1024;
/** How long an ALTCHA challenge may be solved, and its solution remembered as spent. */
export const ALTCHA_LIFETIME_MS = 10 * 60_000;
/** Work for the client: the widget tries up to this many numbers (about a second on a phone). */
const ALTCHA_MAX_NUMBER = 100_000;
/** At most one warning this often while the store is away. */
const STORE_WARNING_INTERVAL_MS = 10_000;

export interface GuardSettings {
  /** redis://…; null: in memory (through the primary with workers). */
  readonly store: string | null;
  /** Before every key in the store: services sharing one Redis keep apart. */
  readonly prefix: string;
}

type Limiter = Pick<RateLimiterAbstract, 'consume'>;

export class ServiceGuards implements Guards {
  /** One limiter per endpoint and rule, kept across --watch reloads (same rule position, same count). */
  private readonly limiters = new Map<string, Limiter>();
  private redis: import('ioredis').Redis | null = null;
  private lastStoreWarning = 0;
  private got: Promise<Got> | null = null;
  /** One process: rate-limiter-flexible's own memory storage, used synchronously; else null. */
  private memory: MemoryStorage | null = null;
  /** rate-limiter-flexible, loaded by open() when the application has rate limits. */
  private library: Library | null = null;

  constructor(
    private readonly settings: GuardSettings,
    private readonly logger: Logger,
    private readonly metrics: ServiceMetrics,
  ) {}

  /**
   * In one process the count is kept by rate-limiter-flexible's memory storage, called
   * synchronously: a request under its limits stays on the synchronous path (docs/performance.md,
   * "Rate limits"). With workers or Redis the count is elsewhere and the answer a promise.
   */
  limit(
    endpoint: Endpoint,
    rules: readonly RateLimitRule[],
    key: (rule: RateLimitRule) => string,
    requestId: string,
  ): LimitExceeded | null | Promise<LimitExceeded | null> {
    const memory = this.memory;
    if (memory === null) return this.limitInStore(endpoint, rules, key, requestId);
    for (const rule of rules) {
      const name = `${this.settings.prefix}${endpoint.name}:${rule.id}`;
      const k = key(rule);
      const seconds = rule.perMs / 1000;
      let counted = memory.incrby(`${name}:${k}`, 1, seconds);
      let allowed = counted.consumedPoints <= rule.requests;
      // burst: that many more requests, from a reserve that refills over ten windows.
      if (!allowed && rule.burst > 0) allowed = memory.incrby(`${name}:burst:${k}`, 1, seconds * 10).consumedPoints <= rule.burst;
      if (!allowed) {
        this.noted(endpoint, { check: 'rate-limit', outcome: 'limited' }, requestId, { window: formatDuration(rule.perMs), requests: rule.requests });
        counted = { consumedPoints: counted.consumedPoints, msBeforeNext: counted.msBeforeNext, remainingPoints: 0 };
        return { rule, headers: limitHeaders(rule, counted) };
      }
    }
    return null;
  }

  private async limitInStore(
    endpoint: Endpoint,
    rules: readonly RateLimitRule[],
    key: (rule: RateLimitRule) => string,
    requestId: string,
  ): Promise<LimitExceeded | null> {
    for (const rule of rules) {
      const limiter = this.limiterFor(endpoint, rule);
      try {
        await limiter.consume(key(rule));
      } catch (rejection) {
        if (rejection instanceof this.library!.RateLimiterRes) {
          this.noted(endpoint, { check: 'rate-limit', outcome: 'limited' }, requestId, { window: formatDuration(rule.perMs), requests: rule.requests });
          return { rule, headers: limitHeaders(rule, rejection) };
        }
        // The store could not count (Redis down, the primary too slow): let the request through.
        this.metrics.guardNoted(endpoint.name, 'rate-limit', 'store-unavailable');
        const now = Date.now();
        if (now - this.lastStoreWarning >= STORE_WARNING_INTERVAL_MS) {
          this.lastStoreWarning = now;
          this.logger.log('warn', 'the rate limit store cannot be reached; requests are let through uncounted until it can', {
            requestId,
            endpoint: endpoint.name,
            error: describeError(rejection),
          });
        }
      }
    }
    return null;
  }

  private limiterFor(endpoint: Endpoint, rule: RateLimitRule): Limiter {
    const name = `${this.settings.prefix}${endpoint.name}:${rule.id}`;
    let limiter = this.limiters.get(name);
    if (limiter !== undefined) return limiter;
    const seconds = rule.perMs / 1000;
    const main = this.make(name, rule.requests, seconds);
    // burst: that many more requests, from a reserve that refills over ten windows.
    limiter =
      rule.burst > 0
        ? new this.library!.BurstyRateLimiter(main as RateLimiterAbstract, this.make(`${name}:burst`, rule.burst, seconds * 10) as RateLimiterAbstract)
        : main;
    this.limiters.set(name, limiter);
    return limiter;
  }

  /** A counter in this service's store: Redis, the primary (workers), or this process's memory. */
  private make(keyPrefix: string, points: number, duration: number): Limiter {
    if (this.library === null) throw new Error('the rate limiter was not opened');
    const { RateLimiterMemory, RateLimiterCluster, RateLimiterRedis } = this.library;
    const options = { keyPrefix, points, duration };
    if (this.settings.store !== null) return new RateLimiterRedis({ ...options, storeClient: this.redisClient(), rejectIfRedisNotReady: true });
    if (cluster.isWorker) return new RateLimiterCluster({ ...options, timeoutMs: 1000 });
    return new RateLimiterMemory(options);
  }

  private redisClient(): import('ioredis').Redis {
    if (this.redis === null) throw new Error('the Redis client was not opened');
    return this.redis;
  }

  /**
   * Loads the rate limiter and connects to the store, when the application has rate limits;
   * resolves once the first connection attempt is over. Called again after a reload.
   */
  async open(application: Application): Promise<void> {
    const counts = (e: Application['endpoints'][number]) =>
      e.protections !== null &&
      (e.protections.limitsByClient.length > 0 || e.protections.limitsByParameter.length > 0 || e.protections.captcha?.provider === 'altcha');
    if (this.library !== null || !application.endpoints.some(counts)) return;
    this.library = await import('rate-limiter-flexible');
    if (this.settings.store === null) {
      if (!cluster.isWorker) {
        const MemoryStorage = createRequire(import.meta.url)(MEMORY_STORAGE_MODULE) as new () => MemoryStorage;
        this.memory = new MemoryStorage();
      }
      return;
    }
    this.redis = await openSharedState(this.settings.store, {
      unreachable: (error) =>
        this.logger.log('warn', 'the rate limit store cannot be reached; requests are let through uncounted until it can', { error: describeError(error) }),
      reachable: () => this.logger.log('info', 'the rate limit store is reachable again'),
    });
  }

  async close(): Promise<void> {
    if (this.redis !== null) this.redis.disconnect();
  }

  async altchaChallenge(hmacKey: string): Promise<string> {
    const { createChallenge } = await import('altcha-lib');
    const challenge = await createChallenge({ hmacKey, maxNumber: ALTCHA_MAX_NUMBER, expires: new Date(Date.now() + ALTCHA_LIFETIME_MS) });
    return JSON.stringify(challenge);
  }

  /**
   * An ALTCHA solution: checked locally (signature, proof of work, expiry), then marked spent
   * for the challenge's lifetime in the same store as the rate limits (memory, the primary with
   * workers, Redis), so a replay is refused by every process and instance.
   */
  private async verifyAltcha(secret: string, token: string): Promise<CaptchaVerdict> {
    const refused = (reason: string): CaptchaVerdict => ({ ok: false, status: 403, detail: 'the CAPTCHA was not solved', reason });
    const { verifySolution } = await import('altcha-lib');
    let signature: unknown;
    try {
      signature = (JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as { signature?: unknown }).signature;
      if (typeof signature !== 'string' || !(await verifySolution(token, secret, true))) return refused('the altcha solution is wrong or expired');
    } catch {
      return refused('the altcha field is not a solution');
    }
    if (this.memory !== null) {
      const spent = this.memory.incrby(`${this.settings.prefix}altcha-spent:${signature}`, 1, ALTCHA_LIFETIME_MS / 1000);
      return spent.consumedPoints > 1 ? refused('the altcha solution was used before') : { ok: true };
    }
    try {
      await this.spentChallenges().consume(signature);
    } catch (rejection) {
      if (rejection instanceof this.library!.RateLimiterRes) return refused('the altcha solution was used before');
      return unavailable(`spent altcha challenges cannot be checked: ${describeError(rejection)}`);
    }
    return { ok: true };
  }

  private spentChallenges(): Limiter {
    const name = `${this.settings.prefix}altcha-spent`;
    let limiter = this.limiters.get(name);
    if (limiter === undefined) {
      limiter = this.make(name, 1, ALTCHA_LIFETIME_MS / 1000);
      this.limiters.set(name, limiter);
    }
    return limiter;
  }

  async verifyCaptcha(rule: CaptchaRule, { secret, verifyUrl, token, clientIp }: CaptchaRequest): Promise<CaptchaVerdict> {
    if (rule.provider === 'altcha') return this.verifyAltcha(secret, token);
    const got = await (this.got ??= import('got').then((m) => m.default));
    let answer: VerifierAnswer;
    try {
      answer = await readVerifierAnswer(
        got.stream.post(verifyUrl, {
          form: { secret, response: token, remoteip: clientIp },
          headers: { 'user-agent': USER_AGENT },
          timeout: { request: CAPTCHA_TIMEOUT_MS },
          retry: { limit: 0 },
          throwHttpErrors: false,
          followRedirect: false,
        }),
      );
    } catch (error) {
      return unavailable(`the ${rule.provider} verifier did not answer: ${describeError(error)}`);
    }
    if (answer.kind === 'too-large')
      return unavailable(`the ${rule.provider} verifier answered more than ${formatSize(CAPTCHA_ANSWER_LIMIT)}; the answer was not read`);
    if (answer.statusCode < 200 || answer.statusCode > 299) return unavailable(`the ${rule.provider} verifier answered ${answer.statusCode}`);
    let result: { success?: unknown; score?: unknown; 'error-codes'?: unknown };
    try {
      result = JSON.parse(answer.body) as typeof result;
    } catch {
      return unavailable(`the ${rule.provider} verifier did not answer JSON`);
    }
    if (result.success !== true) {
      const codes = Array.isArray(result['error-codes']) ? result['error-codes'].join(', ') : 'none given';
      return { ok: false, status: 403, detail: 'the CAPTCHA was not solved', reason: `refused by ${rule.provider} (error codes: ${codes})` };
    }
    if (rule.minScore !== null && !(typeof result.score === 'number' && result.score >= rule.minScore)) {
      return { ok: false, status: 403, detail: 'the CAPTCHA was not solved', reason: `score ${String(result.score)} is below ${rule.minScore}` };
    }
    return { ok: true };
  }

  noted(endpoint: Endpoint, event: GuardEvent, requestId: string, fields: Record<string, unknown> = {}): void {
    this.metrics.guardNoted(endpoint.name, event.check, event.outcome);
    this.logger.log('info', `${event.check}: ${event.outcome}`, { requestId, endpoint: endpoint.name, check: event.check, outcome: event.outcome, ...fields });
  }
}

type VerifierAnswer = { readonly kind: 'answer'; readonly statusCode: number; readonly body: string } | { readonly kind: 'too-large' };

/**
 * The verifier's answer, read up to CAPTCHA_ANSWER_LIMIT bytes: a verifier (or whatever
 * verify-url names) answering megabytes would otherwise be held in memory, once per request.
 * Rejects when the request fails (connection, timeout).
 */
function readVerifierAnswer(stream: import('got').Request): Promise<VerifierAnswer> {
  return new Promise((resolve, reject) => {
    let statusCode = 0;
    let received = 0;
    const chunks: Buffer[] = [];
    const tooLarge = () => {
      stream.destroy();
      resolve({ kind: 'too-large' });
    };
    stream.once('response', (response: { statusCode: number; headers: Record<string, string | string[] | undefined> }) => {
      statusCode = response.statusCode;
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > CAPTCHA_ANSWER_LIMIT) tooLarge();
    });
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > CAPTCHA_ANSWER_LIMIT) tooLarge();
      else chunks.push(chunk);
    });
    stream.once('end', () => resolve({ kind: 'answer', statusCode, body: Buffer.concat(chunks, received).toString('utf8') }));
    stream.once('error', reject);
  });
}

function unavailable(reason: string): CaptchaVerdict {
  return { ok: false, status: 503, detail: 'the CAPTCHA could not be verified; try again in a moment', reason };
}

/** Retry-After and the IETF draft's RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers). */
export function limitHeaders(rule: RateLimitRule, result: Pick<RateLimiterRes, 'msBeforeNext' | 'remainingPoints'>): Record<string, string> {
  const reset = Math.max(1, Math.ceil(result.msBeforeNext / 1000));
  const policy = policyName(rule);
  return {
    'retry-after': String(reset),
    'ratelimit-policy': `"${policy}";q=${rule.requests};w=${rule.perMs / 1000}`,
    ratelimit: `"${policy}";r=${Math.max(0, result.remainingPoints)};t=${reset}`,
  };
}

function policyName(rule: RateLimitRule): string {
  return `${rule.requests}-per-${formatDuration(rule.perMs)}${rule.byParameter === null ? '' : `-by-${rule.byParameter}`}`;
}
