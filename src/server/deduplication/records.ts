// The record of <deduplicate> keys held in one process's memory: the serving process itself
// without --workers, or the cluster primary for all its workers (cluster.ts). One
// event loop owns it, so a claim is atomic without a lock. Entries expire by themselves: each
// read looks at its time, and a sweep drops the expired ones once a minute.
//
// Keys are the client's to choose (an Idempotency-Key), so what is remembered is bounded: at most
// MAX_REMEMBERED answers and MAX_REMEMBERED_BYTES of them, the oldest remembered evicted first
// (counted in endpoint_service_deduplication_evictions_total). 1,500 keys with 60 KB answers
// took a process from 77 to 188 MB, kept for up to 30 days. A running claim is not evicted: they
// are as many as the requests running, and expire within 30 s.

import { randomUUID } from 'node:crypto';
import type { Claim, RememberedAnswer } from '../../runtime/deduplication.js';

interface Entry {
  state: 'running' | 'done';
  fingerprint: string;
  token: string;
  answer: RememberedAnswer | null;
  expiresAt: number;
  /** rememberedSize of the answer, 0 while running. */
  size: number;
}

const SWEEP_EVERY_MS = 60_000;

/** At most this many remembered answers (in one process, or the primary for its workers; in Redis, per endpoint). */
export const MAX_REMEMBERED = 10_000;
/** At most this many bytes of remembered answers, as rememberedSize counts them. */
export const MAX_REMEMBERED_BYTES = 64 * 1024 * 1024;

/** What one remembered answer is counted as: its texts and a fixed share for the key, fingerprint and entry. */
export function rememberedSize(answer: RememberedAnswer): number {
  return 256 + answer.body.length + (answer.location?.length ?? 0) + (answer.contentType?.length ?? 0);
}

export class DeduplicationRecords {
  /** In the order they were written: a remembered answer is written anew, so the first ones are the oldest. */
  private readonly entries = new Map<string, Entry>();
  private readonly sweep: NodeJS.Timeout;
  private remembered = 0;
  private rememberedBytes = 0;
  /** Remembered answers evicted since the start. */
  evictions = 0;

  constructor(
    private readonly now: () => number = Date.now,
    /** Told how many remembered answers a write evicted. */
    private readonly onEvicted: (count: number) => void = () => {},
    private readonly limits: { readonly count: number; readonly bytes: number } = { count: MAX_REMEMBERED, bytes: MAX_REMEMBERED_BYTES },
  ) {
    this.sweep = setInterval(() => {
      const t = this.now();
      for (const [id, entry] of this.entries) if (entry.expiresAt <= t) this.delete(id, entry);
    }, SWEEP_EVERY_MS);
    this.sweep.unref();
  }

  /** Remembered answers now, and their bytes. */
  get size(): { readonly count: number; readonly bytes: number } {
    return { count: this.remembered, bytes: this.rememberedBytes };
  }

  private delete(id: string, entry: Entry): void {
    this.entries.delete(id);
    if (entry.state === 'done') {
      this.remembered--;
      this.rememberedBytes -= entry.size;
    }
  }

  private set(id: string, entry: Entry): void {
    const old = this.entries.get(id);
    if (old !== undefined) this.delete(id, old);
    this.entries.set(id, entry);
    if (entry.state !== 'done') return;
    this.remembered++;
    this.rememberedBytes += entry.size;
    let evicted = 0;
    if (this.remembered > this.limits.count || this.rememberedBytes > this.limits.bytes) {
      for (const [oldest, candidate] of this.entries) {
        if (this.remembered <= this.limits.count && this.rememberedBytes <= this.limits.bytes) break;
        if (candidate.state !== 'done' || oldest === id) continue;
        this.delete(oldest, candidate);
        evicted++;
      }
    }
    if (evicted === 0) return;
    this.evictions += evicted;
    this.onEvicted(evicted);
  }

  private live(id: string): Entry | undefined {
    const entry = this.entries.get(id);
    if (entry !== undefined && entry.expiresAt <= this.now()) {
      this.delete(id, entry);
      return undefined;
    }
    return entry;
  }

  claim(id: string, fingerprint: string, leaseMs: number): Claim {
    const entry = this.live(id);
    if (entry !== undefined) {
      return entry.state === 'done' && entry.answer !== null
        ? { kind: 'done', fingerprint: entry.fingerprint, answer: entry.answer }
        : { kind: 'running', fingerprint: entry.fingerprint };
    }
    const token = randomUUID();
    this.set(id, { state: 'running', fingerprint, token, answer: null, expiresAt: this.now() + leaseMs, size: 0 });
    return { kind: 'claimed', token };
  }

  renew(id: string, token: string, leaseMs: number): void {
    const entry = this.live(id);
    if (entry?.token === token && entry.state === 'running') entry.expiresAt = this.now() + leaseMs;
  }

  /** Remembered when the claim is still this request's, or lapsed with nobody else holding the key. */
  complete(id: string, token: string, fingerprint: string, answer: RememberedAnswer, forMs: number): void {
    const entry = this.live(id);
    if (entry !== undefined && entry.token !== token) return;
    this.set(id, { state: 'done', fingerprint, token, answer, expiresAt: this.now() + forMs, size: rememberedSize(answer) });
  }

  remember(id: string, fingerprint: string, answer: RememberedAnswer, forMs: number): Claim {
    const claim = this.claim(id, fingerprint, forMs);
    if (claim.kind === 'claimed') this.complete(id, claim.token, fingerprint, answer, forMs);
    return claim;
  }

  release(id: string, token: string): void {
    const entry = this.live(id);
    if (entry?.token === token) this.delete(id, entry);
  }

  close(): void {
    clearInterval(this.sweep);
  }
}
