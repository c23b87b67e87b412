// A store that answers but refuses what the URL asks of it: a wrong password, a password that is
// missing, a database that does not exist. Retrying cannot change that answer, and a Redis that
// refuses the database of the URL is still used on database 0 by ioredis, so a process would
// write where `jobs` (and the other processes) never look. Asked once, before a command starts;
// a store that cannot be reached at all is not refused here (the processes wait for it).

import type { QueueBackend } from './settings.js';
import { describeStoreFailure } from './store-errors.js';

/** How long the one connection may take: a store that does not answer in time is left to the retries. */
const CHECK_TIMEOUT_MS = 2_000;

/** Redis replies that no retry changes. */
function redisRefusal(message: string, url: URL): string | null {
  if (message.startsWith('WRONGPASS') || /invalid password/i.test(message))
    return `Redis at ${where(url)} refused the user name or password of the URL (${firstWord(message)}): give the right ones, as redis://[user]:password@host:port`;
  if (message.startsWith('NOAUTH'))
    return `Redis at ${where(url)} requires a password and the URL gives none (NOAUTH): give it, as redis://:password@host:port`;
  if (/DB index is out of range|invalid DB index/i.test(message)) {
    const db = url.pathname.replace(/^\//, '');
    return `Redis at ${where(url)} has no database ${db} (${message.trim()}): name one below its "databases" setting (16 by default), such as redis://${where(url)}/0`;
  }
  return null;
}

/** PostgreSQL errors (SQLSTATE) that no retry changes: authentication and an unknown database. */
const POSTGRES_REFUSALS: Readonly<Record<string, string>> = {
  '28P01': 'refused the password of the URL (28P01): give the right one, as postgres://user:password@host:port/database',
  '28000': 'refused the user of the URL (28000): give a user it accepts from this machine',
  '3D000': 'has no such database (3D000): create it or name another',
};

function where(url: URL): string {
  return url.port === '' ? url.hostname : `${url.hostname}:${url.port}`;
}

function firstWord(message: string): string {
  return message.split(/\s/, 1)[0]!;
}

/** What one connection found: the store takes the URL, refuses it for good, or cannot be reached now. */
export type StoreProbe =
  { readonly kind: 'ok' } | { readonly kind: 'refused'; readonly reason: string } | { readonly kind: 'unreachable'; readonly reason: string };

/**
 * Why the store refuses the URL for good, in one sentence (never the URL: it may hold a
 * password), or null: it accepts it, or it cannot be reached now.
 */
export async function storeRefusal(url: string, backend: QueueBackend): Promise<string | null> {
  const probe = await probeStore(url, backend);
  return probe.kind === 'refused' ? probe.reason : null;
}

/** One connection to the store, said in words a person can act on (store-errors.ts). */
export async function probeStore(url: string, backend: QueueBackend): Promise<StoreProbe> {
  return backend === 'postgres' ? postgresProbe(url) : redisProbe(url);
}

async function redisProbe(text: string): Promise<StoreProbe> {
  const url = new URL(text);
  const { Redis } = await import('ioredis');
  let refusal: string | null = null;
  let failure: unknown = null;
  let refused = () => {};
  const client = new Redis(text, {
    connectTimeout: CHECK_TIMEOUT_MS,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  client.on('error', (error: Error) => {
    refusal ??= redisRefusal(error.message, url);
    failure ??= error;
    if (refusal !== null) refused();
  });
  let timer: NodeJS.Timeout | undefined;
  let ready = false;
  try {
    await Promise.race([
      client.connect().then(() => (ready = true)),
      new Promise<void>((resolve) => (refused = resolve)),
      new Promise((resolve) => (timer = setTimeout(resolve, CHECK_TIMEOUT_MS + 500))),
    ]);
  } catch (error) {
    // Not reachable, or refused (the error event said why).
    failure ??= error;
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
  if (refusal !== null) return { kind: 'refused', reason: refusal };
  if (ready) return { kind: 'ok' };
  return { kind: 'unreachable', reason: describeStoreFailure(failure ?? new Error('connect ETIMEDOUT'), text) };
}

const PG_MODULE = 'pg';

async function postgresProbe(text: string): Promise<StoreProbe> {
  const pg = (await import(PG_MODULE)) as {
    default: { Client: new (config: object) => { connect(): Promise<void>; end(): Promise<void>; on(e: 'error', l: () => void): void } };
  };
  const client = new pg.default.Client({ connectionString: text, connectionTimeoutMillis: CHECK_TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
    return { kind: 'ok' };
  } catch (error) {
    const code = String((error as { code?: unknown }).code);
    const refusal = POSTGRES_REFUSALS[code];
    if (refusal === undefined) return { kind: 'unreachable', reason: describeStoreFailure(error, text) };
    return { kind: 'refused', reason: `PostgreSQL at ${where(new URL(text))} ${refusal}` };
  } finally {
    await client.end().catch(() => {});
  }
}
