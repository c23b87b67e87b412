// Where the delivery log is kept and for how long, as the command line says (docs/deliveries.md,
// "Where it is kept"): the embedded SQLite file in the state folder by default; the queue's
// store when serve has --queue; PostgreSQL or Redis when --deliveries names one; nothing with
// --deliveries none.

import path from 'node:path';

export const DEFAULT_STATE_DIR = '.endpoint-service';
export const DATABASE_FILE = 'deliveries.db';
export const DEFAULT_NAMESPACE = 'endpoint-service';

export type DeliveryStoreLocation =
  | { readonly kind: 'sqlite'; readonly stateDir: string; readonly file: string }
  | { readonly kind: 'redis'; readonly url: string; readonly prefix: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly schema: string };

export interface DeliverySettings {
  readonly store: DeliveryStoreLocation;
  /** --deliveries-max-body: a larger request is recorded without its headers and body. */
  readonly maxBodyBytes: number;
  /** --deliveries-retention */
  readonly retentionMs: number;
  /** --deliveries-max */
  readonly maxRecords: number;
}

/**
 * `given`: --deliveries (a URL or `none`); `queueUrl`: serve's --queue, whose store holds the log
 * when --deliveries is not given. A string for a value that names no store.
 */
export function deliveryLocation(
  given: string | undefined,
  stateDir: string,
  queueUrl: string | null,
  namespace: string,
): DeliveryStoreLocation | null | { readonly problem: string } {
  if (given === 'none') return null;
  const url = given ?? queueUrl;
  if (url === null || url === undefined) return { kind: 'sqlite', stateDir, file: path.join(stateDir, DATABASE_FILE) };
  if (/^rediss?:\/\//i.test(url)) return { kind: 'redis', url, prefix: `${namespace}:deliveries:` };
  if (/^postgres(ql)?:\/\//i.test(url)) return { kind: 'postgres', url, schema: `${namespace.replace(/[^A-Za-z0-9_]/g, '_').toLowerCase()}_deliveries` };
  return { problem: `--deliveries takes none, redis://…, rediss://… or postgres://…, not ${JSON.stringify(url)}` };
}

/** For messages: the URL without its password. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
