// The record of <deduplicate> keys for one serving process (runtime/deduplication.ts says what it
// is for): in this process's memory without --workers, in the primary with --workers
// (deduplication-cluster.ts), and with --rate-limit-store (or the queue's Redis) in Redis, one
// record for every instance sharing it. A claim in Redis is one Lua script, so two processes
// can never both take one key; every key expires by itself (PEXPIRE): a running claim after
// LEASE_MS unless renewed, a remembered answer after `for`. A store that cannot answer fails
// open: the request runs, and the metric and the log say it was not deduplicated.

import cluster from 'node:cluster';
import type { Redis } from 'ioredis';
import type { Application, Endpoint } from '../compiler/ast.js';
import type { Claim, DeduplicationOutcome, DeduplicationStore, RememberedAnswer } from '../runtime/deduplication.js';
import { describeError } from '../errors.js';
import type { Logger } from './log.js';
import type { ServiceMetrics } from './metrics.js';
import { openSharedState } from './shared-state.js';
import { DeduplicationRecords } from './deduplication-records.js';
import { PrimaryRecords } from './deduplication-cluster.js';
import { randomUUID } from 'node:crypto';

export interface DeduplicationSettings {
  /** redis://…; null: in memory (in the primary with workers). */
  readonly store: string | null;
  /** Before every key in the store (--rate-limit-prefix). */
  readonly prefix: string;
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
// ARGV token.
const RELEASE = `
if redis.call('HGET', KEYS[1], 'token') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

interface Backend {
  claim(id: string, fingerprint: string, leaseMs: number): Promise<Claim>;
  renew(id: string, token: string, leaseMs: number): Promise<void>;
  complete(id: string, token: string, fingerprint: string, answer: RememberedAnswer, forMs: number): Promise<void>;
  release(id: string, token: string): Promise<void>;
  remember(id: string, fingerprint: string, answer: RememberedAnswer, forMs: number): Promise<Claim>;
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
  async claim(id: string, fingerprint: string, leaseMs: number) {
    const claim = await this.primary.ask({ op: 'claim', id, fingerprint, leaseMs });
    if (claim === null) throw new Error('the primary process answered a claim with nothing');
    return claim;
  }
  async renew(id: string, token: string, leaseMs: number) {
    await this.primary.ask({ op: 'renew', id, token, leaseMs });
  }
  async complete(id: string, token: string, fingerprint: string, answer: RememberedAnswer, forMs: number) {
    await this.primary.ask({ op: 'complete', id, token, fingerprint, answer, forMs });
  }
  async release(id: string, token: string) {
    await this.primary.ask({ op: 'release', id, token });
  }
  async remember(id: string, fingerprint: string, answer: RememberedAnswer, forMs: number) {
    const claim = await this.primary.ask({ op: 'remember', id, fingerprint, answer, forMs });
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
}

class RedisBackend implements Backend {
  private readonly commands: DeduplicationCommands;
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('dedupClaim', { numberOfKeys: 1, lua: CLAIM });
    redis.defineCommand('dedupRenew', { numberOfKeys: 1, lua: RENEW });
    redis.defineCommand('dedupComplete', { numberOfKeys: 1, lua: COMPLETE });
    redis.defineCommand('dedupRelease', { numberOfKeys: 1, lua: RELEASE });
    redis.defineCommand('dedupRemember', { numberOfKeys: 1, lua: REMEMBER });
    this.commands = redis as unknown as DeduplicationCommands;
  }
  private key(id: string): string {
    return `${this.prefix}dedup:${id}`;
  }
  async claim(id: string, fingerprint: string, leaseMs: number): Promise<Claim> {
    const token = randomUUID();
    return found(token, await this.commands.dedupClaim(this.key(id), fingerprint, token, leaseMs));
  }
  async remember(id: string, fingerprint: string, answer: RememberedAnswer, forMs: number): Promise<Claim> {
    const token = randomUUID();
    return found(token, await this.commands.dedupRemember(this.key(id), fingerprint, token, JSON.stringify(answer), forMs));
  }
  async renew(id: string, token: string, leaseMs: number) {
    await this.commands.dedupRenew(this.key(id), token, leaseMs);
  }
  async complete(id: string, token: string, fingerprint: string, answer: RememberedAnswer, forMs: number) {
    await this.commands.dedupComplete(this.key(id), token, fingerprint, JSON.stringify(answer), forMs);
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
  async open(application: Application): Promise<void> {
    if (this.backend !== null || !application.endpoints.some((e) => e.deduplicate !== null)) return;
    if (this.settings.store === null) {
      this.backend = cluster.isWorker ? new PrimaryBackend() : new MemoryBackend(new DeduplicationRecords());
      return;
    }
    const redis = await openSharedState(this.settings.store, {
      unreachable: (error) =>
        this.logger.log('warn', 'the deduplication store cannot be reached; requests run without deduplication until it can', {
          error: describeError(error),
        }),
      reachable: () => this.logger.log('info', 'the deduplication store is reachable again'),
    });
    this.backend = new RedisBackend(redis, this.settings.prefix);
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

  complete(id: string, token: string, fingerprint: string, answer: RememberedAnswer, forMs: number): Promise<void> {
    return this.quietly('remember the answer of', () => this.backend!.complete(id, token, fingerprint, answer, forMs));
  }

  release(id: string, token: string): Promise<void> {
    return this.quietly('release', () => this.backend!.release(id, token));
  }

  async remember(id: string, fingerprint: string, answer: RememberedAnswer, forMs: number): Promise<Claim> {
    if (this.backend === null) return { kind: 'unavailable', reason: 'the deduplication store is not open yet' };
    try {
      return await this.backend.remember(id, fingerprint, answer, forMs);
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
