// What a request's end hands the delivery log: its record with the request to seal, or a task's
// later outcome. Plain data, so that it can cross to the writer thread.

import type { DeliveryRecord, KeptRequest, TaskRecord } from './record.js';

export type LogEntry =
  | { readonly kind: 'delivery'; readonly record: DeliveryRecord; readonly request: KeptRequest | null }
  | { readonly kind: 'task'; readonly delivery: string; readonly task: TaskRecord };
