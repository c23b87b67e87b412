// What a request's end hands the delivery log: its record with the request to seal, or a task's
// later outcome. Plain data, so that it can cross to the writer thread.

import type { DeliveryRecord, TaskRecord } from './record.js';

/**
 * The request as it crosses to the writer thread, where it becomes a KeptRequest and is sealed.
 * Flat on purpose: a thread message copies every object and every Buffer one by one, and node's
 * rawHeaders and an absent body cost it least.
 */
export interface CapturedRequest {
  readonly method: string;
  readonly url: string;
  /** node's rawHeaders: [name, value, name, value, …], in the order received. */
  readonly rawHeaders: readonly string[];
  /** The body as it arrived, in the chunks it arrived in; null: no body. */
  readonly body: readonly Uint8Array[] | null;
}

export type LogEntry =
  | { readonly kind: 'delivery'; readonly record: DeliveryRecord; readonly request: CapturedRequest | null }
  | { readonly kind: 'task'; readonly delivery: string; readonly task: TaskRecord };
