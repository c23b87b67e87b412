// What the stores share about replay tickets: how a ticket is named and how its outcome is kept.

import { randomUUID } from 'node:crypto';
import type { ReplayOutcome } from './store.js';

/** How long an outcome is kept after the replay finished: `deliveries replay` waits for it far less. */
export const REPLAY_OUTCOME_TTL_MS = 60 * 60_000;

export function newTicket(): string {
  return randomUUID();
}

export function encodeOutcome(outcome: ReplayOutcome): string {
  return JSON.stringify(outcome.ok ? { ok: true, delivery: outcome.delivery } : { ok: false, error: outcome.error });
}

export function decodeOutcome(text: string): ReplayOutcome {
  const value = JSON.parse(text) as Partial<{ ok: boolean; delivery: string; error: string }>;
  if (value.ok === true && typeof value.delivery === 'string') return { ok: true, delivery: value.delivery };
  if (value.ok === false && typeof value.error === 'string') return { ok: false, error: value.error };
  throw new Error(`the store holds a replay outcome of an unknown shape: ${text.slice(0, 200)}`);
}
