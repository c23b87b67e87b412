// The delivery log in Redis, for a service whose instances already share one: every instance
// writes the same keys under the prefix, so they keep one log. ioredis is loaded when a store is
// opened, as the queue and shared state load it.
//
// Keys, under the prefix:
//   delivery:<id>           hash: record (its JSON), endpoint and verdict (for counts), sealed (when kept)
//   tasks:<id>              hash: task id -> "<ordinal> <ended> <JSON>" (redis-scripts.ts)
//   index                   sorted set: delivery ids scored by receivedAt in epoch ms (redis-index.ts)
//   group:<id>              string: requests sealed together (sealed-request.ts), named by deliveries' sealed
//   groups                  sorted set: group ids scored by when they were written, for pruning
//   replay:waiting          list: "<ticket> <delivery>", the newest at the head
//   replay:claimed          hash: ticket -> "<epoch ms claimed> <delivery>", until finished
//   replay:outcome:<ticket> string: the outcome's JSON, kept an hour

import type { ChainableCommander, Redis } from 'ioredis';
import { cursorPosition, pageSize, selects } from './delivery-query.js';
import { epochMs } from './delivery-row.js';
import type { DeliveryRecord, TaskRecord } from './record.js';
import { newestFirst } from './redis-index.js';
import { CLAIM_REPLAY_SCRIPT, decodeTaskField, WRITE_DELIVERIES_SCRIPT, WRITE_TASKS_SCRIPT } from './redis-scripts.js';
import { decodeOutcome, encodeOutcome, newTicket, REPLAY_OUTCOME_TTL_MS } from './replay.js';
import { GROUP_MARGIN_MS } from './sealed-groups.js';
import { storedRequest } from './sealed-request.js';
import { namingErrors } from './store-errors.js';
import { withoutPassword } from './store-url.js';
import type { DeliveryStore, DeliveryWrite } from './store.js';
import { isTerminal, mergeTasks } from './task-merge.js';

/** Longest wait for a connection, and for the first one when the store is opened. */
const CONNECT_TIMEOUT_MS = 2_000;
/** A Redis that stopped answering (a fork or fsync stall, a paused process) fails a command after this, rather than holding the log's writer. */
const COMMAND_TIMEOUT_MS = 5_000;
/** Index entries read at a time. */
const PAGE = 500;
/** A filtered listing reads at most this many entries of the index: filtering happens here, not in Redis. */
const SCAN_BOUND = 10_000;
/** How long the task writes of a delivery that has not landed are kept: it lands within seconds, or never. */
const ORPHAN_TASKS_TTL_MS = 24 * 60 * 60_000;

/** The names the scripts are defined under on the connection (ioredis defineCommand). */
const WRITE_TASKS = 'endpointServiceWriteDeliveryTasks';
const CLAIM_REPLAY = 'endpointServiceClaimReplay';
const WRITE_DELIVERIES = 'endpointServiceWriteDeliveries';

interface Scripts {
  [CLAIM_REPLAY](waiting: string, claimed: string, now: number): Promise<string | null>;
  [WRITE_DELIVERIES](index: string, ...args: (string | number)[]): Promise<number>;
}
interface ScriptsInTransaction {
  [WRITE_TASKS](...args: (string | number)[]): ChainableCommander;
  [WRITE_DELIVERIES](index: string, ...args: (string | number)[]): ChainableCommander;
}

/** Connects to `url`; rejects with one sentence naming the store when the first connection fails. */
export async function openRedisStore(url: string, prefix: string): Promise<DeliveryStore> {
  const { Redis } = await import('ioredis');
  const description = `Redis at ${withoutPassword(url)}`;
  const redis = new Redis(url, {
    // While Redis is away a command fails at once rather than waiting in memory, and none is sent
    // again after a reconnect: a replay requested twice would be replayed twice.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  });
  // Failures reach the callers as rejected commands; the event would only say them again.
  redis.on('error', () => {});
  try {
    await firstConnection(redis);
  } catch (error) {
    redis.disconnect();
    throw new Error(`${description} cannot be reached: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  redis.defineCommand(WRITE_TASKS, { numberOfKeys: 0, lua: WRITE_TASKS_SCRIPT });
  redis.defineCommand(CLAIM_REPLAY, { numberOfKeys: 2, lua: CLAIM_REPLAY_SCRIPT });
  redis.defineCommand(WRITE_DELIVERIES, { numberOfKeys: 1, lua: WRITE_DELIVERIES_SCRIPT });
  return namingErrors(storeOn(redis, prefix, description));
}

function firstConnection(redis: Redis): Promise<void> {
  return new Promise((resolve, reject) => {
    // A Redis that takes the connection but never answers would otherwise hold the open.
    const timer = setTimeout(() => settle(new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`)), CONNECT_TIMEOUT_MS);
    function settle(error?: Error): void {
      clearTimeout(timer);
      redis.off('ready', ready);
      redis.off('error', settle);
      if (error === undefined) resolve();
      else reject(error);
    }
    const ready = () => settle();
    redis.once('ready', ready);
    redis.once('error', settle);
  });
}

/** The replies of a pipeline or transaction; rejects with the first command's error. */
async function replies(commands: ChainableCommander): Promise<unknown[]> {
  const results = await commands.exec();
  if (results === null) throw new Error('the transaction was discarded');
  for (const [error] of results) if (error) throw error;
  return results.map(([, value]) => value);
}

/** A task hash's tasks in the order first written. */
function writtenTasks(hash: Readonly<Record<string, string>>): TaskRecord[] {
  return Object.values(hash)
    .map(decodeTaskField)
    .sort((a, b) => a.ordinal - b.ordinal)
    .map((field) => JSON.parse(field.json) as TaskRecord);
}

/** Removes the groups (sealed-groups.ts) that no delivery left in `index` can name. */
async function pruneGroups(redis: Redis, index: string, groups: string, group: (id: string) => string): Promise<void> {
  const oldest = await redis.zrange(index, 0, 0, 'WITHSCORES');
  const cutoff = (oldest.length === 2 ? Number(oldest[1]) : Date.now()) - GROUP_MARGIN_MS;
  for (let old = await redis.zrangebyscore(groups, '-inf', `(${cutoff}`, 'LIMIT', 0, PAGE); old.length > 0;) {
    await replies(
      redis
        .multi()
        .zrem(groups, ...old)
        .unlink(...old.map(group)),
    );
    old = await redis.zrangebyscore(groups, '-inf', `(${cutoff}`, 'LIMIT', 0, PAGE);
  }
}

type Keys = ReturnType<typeof keysUnder>;

function keysUnder(prefix: string) {
  return {
    delivery: (id: string) => `${prefix}delivery:${id}`,
    tasks: (id: string) => `${prefix}tasks:${id}`,
    index: `${prefix}index`,
    group: (id: string) => `${prefix}group:${id}`,
    groups: `${prefix}groups`,
    waiting: `${prefix}replay:waiting`,
    claimed: `${prefix}replay:claimed`,
    outcome: (ticket: string) => `${prefix}replay:outcome:${ticket}`,
  };
}

/** One transaction: the records, their index entries, their groups and the tasks are seen together or not at all. */
function batchTransaction(redis: Redis, prefix: string, key: Keys, batch: readonly DeliveryWrite[]): ChainableCommander {
  const transaction = redis.multi();
  const scripted = transaction as unknown as ScriptsInTransaction;
  const deliveries: (string | number)[] = [prefix];
  const tasks: (string | number)[] = [prefix, ORPHAN_TASKS_TTL_MS];
  const now = Date.now();
  for (const w of batch) {
    if (w.kind === 'sealed-group') {
      transaction.set(key.group(w.id), w.sealed).zadd(key.groups, now, w.id);
    } else if (w.kind === 'task') {
      tasks.push(w.delivery, w.task.id, isTerminal(w.task.state) ? '1' : '0', JSON.stringify(w.task));
    } else {
      const { record, sealed } = w;
      deliveries.push(record.id, epochMs(record.receivedAt, record.id), JSON.stringify(record), `${record.endpoint} ${record.verdict}`, sealed ?? '');
    }
  }
  // Tasks before deliveries: a task written before its delivery is given an expiry, which the
  // delivery's write then lifts (redis-scripts.ts).
  if (tasks.length > 2) scripted[WRITE_TASKS](...tasks);
  if (deliveries.length > 1) scripted[WRITE_DELIVERIES](key.index, ...deliveries);
  return transaction;
}

function storeOn(redis: Redis, prefix: string, description: string): DeliveryStore {
  const key = keysUnder(prefix);
  const scripts = redis as unknown as Scripts;
  let closed = false;

  /** The records of `ids`; null for one pruned since the index was read. */
  const recordsOf = async (ids: readonly string[]): Promise<(DeliveryRecord | null)[]> => {
    if (ids.length === 0) return [];
    const values = await replies(redis.pipeline(ids.map((id) => ['hget', key.delivery(id), 'record'])));
    return values.map((value) => (typeof value === 'string' ? (JSON.parse(value) as DeliveryRecord) : null));
  };

  const withTaskWrites = async (records: readonly DeliveryRecord[]): Promise<DeliveryRecord[]> => {
    if (records.length === 0) return [];
    const hashes = (await replies(redis.pipeline(records.map((r) => ['hgetall', key.tasks(r.id)])))) as Record<string, string>[];
    return records.map((r, i) => ({ ...r, tasks: mergeTasks(r.tasks, writtenTasks(hashes[i]!)) }));
  };

  return {
    description,
    async write(batch) {
      if (batch.length > 0) await replies(batchTransaction(redis, prefix, key, batch));
    },
    async list(query) {
      const limit = pageSize(query);
      if (limit === 0) return [];
      const after = query.after === undefined ? null : cursorPosition(query.after);
      const top = Math.min(query.until ?? Infinity, after?.ms ?? Infinity);
      const filtered = query.endpoint !== undefined || query.verdict !== undefined || query.status !== undefined || (query.text ?? '') !== '';
      const found: DeliveryRecord[] = [];
      let scanned = 0;
      const entries = newestFirst(redis, key.index, top === Infinity ? '+inf' : top, query.since ?? '-inf', filtered ? PAGE : Math.min(limit + 1, PAGE));
      for await (const page of entries) {
        const records = await recordsOf(page.map((e) => e.id));
        for (let i = 0; i < page.length && found.length < limit; i++) {
          const r = records[i];
          if (r !== null && r !== undefined && selects(query, r, page[i]!.ms)) found.push(r);
        }
        scanned += page.length;
        if (found.length === limit || scanned >= SCAN_BOUND) break;
      }
      return withTaskWrites(found);
    },
    async get(id) {
      const [fields, hash] = await replies(redis.pipeline().hmget(key.delivery(id), 'record', 'sealed').hgetall(key.tasks(id)));
      const [json, sealed] = fields as (string | null)[];
      if (json === null || json === undefined) return null;
      const record = JSON.parse(json) as DeliveryRecord;
      const tasks = mergeTasks(record.tasks, writtenTasks(hash as Record<string, string>));
      return { record: { ...record, tasks }, sealed: await storedRequest(sealed ?? null, (group) => redis.get(key.group(group))) };
    },
    async counts(since) {
      const verdicts: Record<string, number> = {};
      const endpoints: Record<string, number> = {};
      // Every entry of the window, unbounded: a count that stopped early would be a wrong count.
      for await (const page of newestFirst(redis, key.index, '+inf', since, PAGE)) {
        const values = (await replies(redis.pipeline(page.map((e) => ['hmget', key.delivery(e.id), 'endpoint', 'verdict'])))) as (string | null)[][];
        for (const [endpoint, verdict] of values) {
          if (endpoint === null || endpoint === undefined || verdict === null || verdict === undefined) continue;
          endpoints[endpoint] = (endpoints[endpoint] ?? 0) + 1;
          verdicts[verdict] = (verdicts[verdict] ?? 0) + 1;
        }
      }
      return { verdicts, endpoints };
    },
    async prune(before, keep) {
      let gone = 0;
      const remove = async (ids: readonly string[]) => {
        const [removed] = await replies(
          redis
            .multi()
            .zrem(key.index, ...ids)
            .unlink(...ids.flatMap((id) => [key.delivery(id), key.tasks(id)])),
        );
        gone += Number(removed);
      };
      for (let old = await redis.zrangebyscore(key.index, '-inf', `(${before}`, 'LIMIT', 0, PAGE); old.length > 0;) {
        await remove(old);
        old = await redis.zrangebyscore(key.index, '-inf', `(${before}`, 'LIMIT', 0, PAGE);
      }
      if (Number.isFinite(keep)) {
        for (let beyond = (await redis.zcard(key.index)) - Math.max(0, Math.floor(keep)); beyond > 0;) {
          await remove(await redis.zrange(key.index, 0, Math.min(beyond, PAGE) - 1));
          beyond = (await redis.zcard(key.index)) - Math.max(0, Math.floor(keep));
        }
      }
      await pruneGroups(redis, key.index, key.groups, key.group);
      // A claim whose serve stopped before finishing it: nobody will.
      const claims = await redis.hgetall(key.claimed);
      const stale = Object.keys(claims).filter((ticket) => Number(claims[ticket]!.split(' ', 1)[0]) < before);
      if (stale.length > 0) await redis.hdel(key.claimed, ...stale);
      return gone;
    },
    async requestReplay(delivery) {
      const ticket = newTicket();
      await redis.lpush(key.waiting, `${ticket} ${delivery}`);
      return ticket;
    },
    async claimReplay() {
      const entry = await scripts[CLAIM_REPLAY](key.waiting, key.claimed, Date.now());
      if (entry === null) return null;
      const space = entry.indexOf(' ');
      return { ticket: entry.slice(0, space), delivery: entry.slice(space + 1) };
    },
    async finishReplay(ticket, outcome) {
      await replies(redis.multi().set(key.outcome(ticket), encodeOutcome(outcome), 'PX', REPLAY_OUTCOME_TTL_MS).hdel(key.claimed, ticket));
    },
    async replayOutcome(ticket) {
      const text = await redis.get(key.outcome(ticket));
      return text === null ? null : decodeOutcome(text);
    },
    async close() {
      if (closed) return;
      closed = true;
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
      else redis.disconnect();
    },
  };
}
