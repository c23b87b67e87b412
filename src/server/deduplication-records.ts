// The record of <deduplicate> keys held in one process's memory: the serving process itself
// without --workers, or the cluster primary for all its workers (deduplication-cluster.ts). One
// event loop owns it, so a claim is atomic without a lock. Entries expire by themselves: each
// read looks at its time, and a sweep drops the expired ones once a minute.

import { randomUUID } from 'node:crypto';
import type { Claim, RememberedAnswer } from '../runtime/deduplication.js';

interface Entry {
  state: 'running' | 'done';
  fingerprint: string;
  token: string;
  answer: RememberedAnswer | null;
  expiresAt: number;
}

const SWEEP_EVERY_MS = 60_000;

export class DeduplicationRecords {
  private readonly entries = new Map<string, Entry>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweep = setInterval(() => {
      const t = this.now();
      for (const [id, entry] of this.entries) if (entry.expiresAt <= t) this.entries.delete(id);
    }, SWEEP_EVERY_MS);
    this.sweep.unref();
  }

  private live(id: string): Entry | undefined {
    const entry = this.entries.get(id);
    if (entry !== undefined && entry.expiresAt <= this.now()) {
      this.entries.delete(id);
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
    this.entries.set(id, { state: 'running', fingerprint, token, answer: null, expiresAt: this.now() + leaseMs });
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
    this.entries.set(id, { state: 'done', fingerprint, token, answer, expiresAt: this.now() + forMs });
  }

  remember(id: string, fingerprint: string, answer: RememberedAnswer, forMs: number): Claim {
    const claim = this.claim(id, fingerprint, forMs);
    if (claim.kind === 'claimed') this.complete(id, claim.token, fingerprint, answer, forMs);
    return claim;
  }

  release(id: string, token: string): void {
    if (this.live(id)?.token === token) this.entries.delete(id);
  }

  close(): void {
    clearInterval(this.sweep);
  }
}
