// The record of <deduplicate> keys for one serving process (runtime/deduplication.ts says what it
// is for): in this process's memory without --workers, in the primary with --workers
// (cluster.ts), and with --rate-limit-store (or the queue's Redis) in Redis, one
// record for every instance sharing it. A claim in Redis is one Lua script, so two processes
// can never both take one key; every key expires by itself (PEXPIRE): a running claim after
// LEASE_MS unless renewed, a remembered answer after `for`. A store that cannot answer fails
// open: the request runs, and the metric and the log say it was not deduplicated.

import cluster from 'node:cluster';
import type { Redis } from 'ioredis';
import type { Application, Endpoint } from '../../compiler/ast.js';
import type { Claim, DeduplicationOutcome, DeduplicationStore, RememberedAnswer } from '../../runtime/deduplication.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics.js';
import { openSharedState } from '../shared-state.js';
import { DeduplicationRecords, MAX_REMEMBERED, MAX_REMEMBERED_BYTES, rememberedSize } from './records.js';
import { PrimaryRecords } from './cluster.js';
import { randomUUID } from 'node:crypto';

export interface DeduplicationSettings {
  /** redis://…; null: in memory (in the primary with workers). */
  readonly store: string | null;
  /** Before every key in the store (--rate-limit-prefix). */
  readonly prefix: string;
  /** The bound on remembered answers; MAX_REMEMBERED and MAX_REMEMBERED_BYTES unless a test says otherwise. */
  readonly limits?: RememberedLimits;
}

export interface RememberedLimits {
  readonly count: number;
  readonly bytes: number;
}

// KEYS[1] the key; ARGV fingerprint, token, lease. Answers nil when claimed, else the record.
const CLAIM = `
local v = redis.call('HMGET', KEYS[1], 'state', 'fp', 'answer')
if v[1] then return {v[1], v[2] or '', v[3] or ''} end
redis.call('HSET', KEYS[1], 'state', 'running', 'fp', ARGV[1], 'token', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return false`;
// ARGV token, lease.
const RENEW = `
if redis.call('HGET', KEYS[1], 'token') == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;
// ARGV token, fingerprint, answer, for. Written when the claim is still ours, or lapsed with nobody else holding the key.
const COMPLETE = `
local t = redis.call('HGET', KEYS[1], 'token')
if t and t ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'done', 'fp', ARGV[2], 'token', ARGV[1], 'answer', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;
// ARGV fingerprint, token, answer, for: a claim remembered at once when the key is free, else the record (as CLAIM).
const REMEMBER = `
local v = redis.call('HMGET', KEYS[1], 'state', 'fp', 'answer')
if v[1] then return {v[1], v[2] or '', v[3] or ''} end
redis.call('HSET', KEYS[1], 'state', 'done', 'fp', ARGV[1], 'token', ARGV[2], 'answer', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return false`;
// After an answer is remembered: KEYS the key, the endpoint's index (a sorted set of its
// remembered keys by when they were written) and its sizes (a hash, '#' the total); ARGV size,
// time, most answers, most bytes, the answer's `for` (the index lives as long as its longest). Evicts the oldest of the endpoint's
// remembered answers beyond either bound (not this one, nor a key that is running again) and
// answers how many.
const BOUND = `
local old = tonumber(redis.call('HGET', KEYS[3], KEYS[1]) or '0')
redis.call('HSET', KEYS[3], KEYS[1], ARGV[1])
local total = redis.call('HINCRBY', KEYS[3], '#', tonumber(ARGV[1]) - old)
redis.call('ZADD', KEYS[2], ARGV[2], KEYS[1])
local count = redis.call('ZCARD', KEYS[2])
local evicted = 0
while count > tonumber(ARGV[3]) or total > tonumber(ARGV[4]) do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if not oldest or oldest == KEYS[1] then break end
  redis.call('ZREM', KEYS[2], oldest)
  total = redis.call('HINCRBY', KEYS[3], '#', -tonumber(redis.call('HGET', KEYS[3], oldest) or '0'))
  redis.call('HDEL', KEYS[3], oldest)
  if redis.call('HGET', oldest, 'state') == 'done' then
    redis.call('DEL', oldest)
    evicted = evicted + 1
  end
  count = count - 1
end
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[5]) then redis.call('PEXPIRE', KEYS[2], ARGV[5]) end
if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[5]) then redis.call('PEXPIRE', KEYS[3], ARGV[5]) end
return evicted`;
// ARGV token.
const RELEASE = `
if redis.call('HGET', KEYS[1], 'token') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

interface Backend {
  claim(id: string, fingerprint: string, leaseMs: number): Promise<Claim>;
  renew(id: string, token: string, leaseMs: number): Promise<void>;
  complete(id: string, token: string, fingerprint: string, answer: RememberedAnswer, forMs: number, endpoint: string): Promise<void>;
  release(id: string, token: string): Promise<void>;
  remember(id: string, fingerprint: string, answer: RememberedAnswer, forMs: number, endpoint: string): Promise<Claim>;
  close(): void;
}

class MemoryBackend implements Backend {
  constructor(private readonly records: DeduplicationRecords) {}
  async claim(id: string, fingerprint: string, leaseMs: number) {
    return this.records.claim(id, fingerprint, leaseMs);
  }
  async renew(id: string, token: string, leaseMs: number) {
    this.records.renew(id, token, leaseMs);
  }
  async complete(id: string, token: string, fingerprint: string, answer: RememberedAnswer, forMs: number) {
    this.records.complete(id, token, fingerprint, answer, forMs);
  }
  async release(id: string, token: string) {
    this.records.release(id, token);
  }
  async remember(id: string, fingerprint: string, answer: RememberedAnswer, forMs: number) {
    return this.records.remember(id, fingerprint, answer, forMs);
  }
  close() {
    this.records.close();
  }
}

class PrimaryBackend implements Backend {
  private readonly primary = new PrimaryRecords();
  constructor(private readonly onEvicted: (count: number) => void) {}
  private async ask(operation: Parameters<PrimaryRecords['ask']>[0]): Promise<Claim | null> {
    const { claim, evicted } = await this.primary.ask(operation);
    if (evicted > 0) this.onEvicted(evicted);
    return claim;
  }
  async claim(id: string, fingerprint: string, leaseMs: number) {
    const claim = await this.ask({ op: 'claim', id, fingerprint, leaseMs });
    if (claim === null) throw new Error('the primary process answered a claim with nothing');
    return claim;
  }
  async renew(id: string, token: string, leaseMs: number) {
    await this.ask({ op: 'renew', id, token, leaseMs });
  }
  async complete(id: string, token: string, fingerprint: string, answer: RememberedAnswer, forMs: number) {
    await this.ask({ op: 'complete', id, token, fingerprint, answer, forMs });
  }
  async release(id: string, token: string) {
    await this.ask({ op: 'release', id, token });
  }
  async remember(id: string, fingerprint: string, answer: RememberedAnswer, forMs: number) {
    const claim = await this.ask({ op: 'remember', id, fingerprint, answer, forMs });
    if (claim === null) throw new Error('the primary process answered with nothing');
    return claim;
  }
  close() {}
}

/** The scripts as commands of the client: sent by their SHA (EVALSHA), the text only once. */
interface DeduplicationCommands {
  dedupClaim(key: string, fingerprint: string, token: string, leaseMs: number): Promise<[string, string, string] | null>;
  dedupRenew(key: string, token: string, leaseMs: number): Promise<number>;
  dedupComplete(key: string, token: string, fingerprint: string, answer: string, forMs: number): Promise<number>;
  dedupRelease(key: string, token: string): Promise<number>;
  dedupRemember(key: string, fingerprint: string, token: string, answer: string, forMs: number): Promise<[string, string, string] | null>;
  dedupBound(key: string, index: string, sizes: string, size: number, now: number, maxCount: number, maxBytes: number, forMs: number): Promise<number>;
}

class RedisBackend implements Backend {
  private readonly commands: DeduplicationCommands;
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly onEvicted: (count: number) => void,
    private readonly limits: RememberedLimits,
  ) {
    redis.defineCommand('dedupClaim', { numberOfKeys: 1, lua: CLAIM });
    redis.defineCommand('dedupRenew', { numberOfKeys: 1, lua: RENEW });
    redis.defineCommand('dedupComplete', { numberOfKeys: 1, lua: COMPLETE });
    redis.defineCommand('dedupRelease', { numberOfKeys: 1, lua: RELEASE });
    redis.defineCommand('dedupRemember', { numberOfKeys: 1, lua: REMEMBER });
    redis.defineCommand('dedupBound', { numberOfKeys: 3, lua: BOUND });
    this.commands = redis as unknown as DeduplicationCommands;
  }
  /** The endpoint's remembered answers within the limits (MAX_REMEMBERED, MAX_REMEMBERED_BYTES), as in memory. */
  private async bound(id: string, answer: RememberedAnswer, endpoint: string, forMs: number): Promise<void> {
    const at = `${this.prefix}dedup-remembered:${endpoint}`;
    const evicted = await this.commands.dedupBound(
      this.key(id),
      `${at}:order`,
      `${at}:sizes`,
      rememberedSize(answer),
      Date.now(),
      this.limits.count,
      this.limits.bytes,
      forMs,
    );
    if (evicted > 0) this.onEvicted(evicted);
  }
  private key(id: string): string {
    return `${this.prefix}dedup:${id}`;
  }
  async claim(id: string, fingerprint: string, leaseMs: number): Promise<Claim> {
    const token = randomUUID();
    try {
      return found(token, await this.commands.dedupClaim(this.key(id), fingerprint, token, leaseMs));
    } catch (error) {
      // Given up on (a store that stalls past the bound): the request runs without the key, but a
      // stalled store still applies the claim when it resumes, and the sender's next retry would
      // get 409 for the lease though nothing runs. The release goes right behind it on the same
      // connection, so the store applies both, in order; a claim it never took is not released.
      this.commands.dedupRelease(this.key(id), token).catch(() => {});
      throw error;
    }
  }
  async remember(id: string, fingerprint: string, answer: RememberedAnswer, forMs: number, endpoint: string): Promise<Claim> {
    const token = randomUUID();
    const claim = found(token, await this.commands.dedupRemember(this.key(id), fingerprint, token, JSON.stringify(answer), forMs));
    if (claim.kind === 'claimed') await this.bound(id, answer, endpoint, forMs);
    return claim;
  }
  async renew(id: string, token: string, leaseMs: number) {
    await this.commands.dedupRenew(this.key(id), token, leaseMs);
  }
  async complete(id: string, token: string, fingerprint: string, answer: RememberedAnswer, forMs: number, endpoint: string) {
    if ((await this.commands.dedupComplete(this.key(id), token, fingerprint, JSON.stringify(answer), forMs)) === 1)
      await this.bound(id, answer, endpoint, forMs);
  }
  async release(id: string, token: string) {
    await this.commands.dedupRelease(this.key(id), token);
  }
  close() {
    this.redis.disconnect();
  }
}

/** What CLAIM and REMEMBER answer, as a Claim. */
function found(token: string, record: [string, string, string] | null): Claim {
  if (record === null) return { kind: 'claimed', token };
  const [state, fp, answer] = record;
  if (state === 'done' && answer !== '') return { kind: 'done', fingerprint: fp, answer: JSON.parse(answer) as RememberedAnswer };
  return { kind: 'running', fingerprint: fp };
}

/** At most one warning this often about a store that cannot take a completion or release. */
const STORE_WARNING_INTERVAL_MS = 10_000;

export class ServiceDeduplication implements DeduplicationStore {
  private backend: Backend | null = null;
  private lastWarning = 0;

  constructor(
    private readonly settings: DeduplicationSettings,
    private readonly logger: Logger,
    private readonly metrics: ServiceMetrics,
  ) {}

  /** Opens the store when the application deduplicates; resolves once the first connection attempt is over. Called again after a reload. */
  private get limits(): RememberedLimits {
    return this.settings.limits ?? { count: MAX_REMEMBERED, bytes: MAX_REMEMBERED_BYTES };
  }

  async open(application: Application): Promise<void> {
    if (this.backend !== null || !application.endpoints.some((e) => e.deduplicate !== null)) return;
    if (this.settings.store === null) {
      const evicted = (count: number) => this.metrics.deduplicationEvicted(count);
      this.backend = cluster.isWorker ? new PrimaryBackend(evicted) : new MemoryBackend(new DeduplicationRecords(Date.now, evicted, this.limits));
      return;
    }
    const redis = await openSharedState(this.settings.store, {
      unreachable: (error) =>
        this.logger.log('warn', 'the deduplication store cannot be reached; requests run without deduplication until it can', {
          error: describeError(error),
        }),
      reachable: () => this.logger.log('info', 'the deduplication store is reachable again'),
    });
    this.backend = new RedisBackend(redis, this.settings.prefix, (count) => this.metrics.deduplicationEvicted(count), this.limits);
  }

  close(): void {
    this.backend?.close();
  }

  async claim(id: string, fingerprint: string, leaseMs: number): Promise<Claim> {
    if (this.backend === null) return { kind: 'unavailable', reason: 'the deduplication store is not open yet' };
    try {
      return await this.backend.claim(id, fingerprint, leaseMs);
    } catch (error) {
      return { kind: 'unavailable', reason: describeError(error) };
    }
  }

  renew(id: string, token: string, leaseMs: number): Promise<void> {
    return this.quietly('renew', () => this.backend!.renew(id, token, leaseMs));
  }

  complete(id: string, token: string, fingerprint: string, answer: RememberedAnswer, forMs: number, endpoint = ''): Promise<void> {
    return this.quietly('remember the answer of', () => this.backend!.complete(id, token, fingerprint, answer, forMs, endpoint));
  }

  release(id: string, token: string): Promise<void> {
    return this.quietly('release', () => this.backend!.release(id, token));
  }

  async remember(id: string, fingerprint: string, answer: RememberedAnswer, forMs: number, endpoint = ''): Promise<Claim> {
    if (this.backend === null) return { kind: 'unavailable', reason: 'the deduplication store is not open yet' };
    try {
      return await this.backend.remember(id, fingerprint, answer, forMs, endpoint);
    } catch (error) {
      return { kind: 'unavailable', reason: describeError(error) };
    }
  }

  /** A claim taken expires by itself (LEASE_MS): a store that cannot take the outcome is only logged. */
  private async quietly(what: string, operation: () => Promise<void>): Promise<void> {
    try {
      await operation();
    } catch (error) {
      const now = Date.now();
      if (now - this.lastWarning < STORE_WARNING_INTERVAL_MS) return;
      this.lastWarning = now;
      this.logger.log('warn', `the deduplication store could not ${what} a key; it expires by itself`, { error: describeError(error) });
    }
  }

  noted(endpoint: Endpoint, outcome: DeduplicationOutcome, requestId: string, fields: Record<string, unknown> = {}): void {
    this.metrics.deduplicated(endpoint.name, outcome);
    const message =
      outcome === 'replayed'
        ? 'deduplicated: the remembered answer was sent again'
        : outcome === 'in-flight'
          ? 'deduplicated: the first request with this key is still running (409)'
          : outcome === 'mismatch'
            ? 'deduplicated: the key was used for another request (422)'
            : 'not deduplicated: the deduplication store cannot be reached, so the request runs';
    this.logger.log(outcome === 'store-down' ? 'warn' : 'info', message, { requestId, endpoint: endpoint.name, outcome, ...fields });
  }
}
