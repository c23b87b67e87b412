// serve's delivery log as a whole: the store opened, the key found, the recording that the HTTP
// service feeds, the replays it takes from the store, the retention sweep. A log that cannot be
// opened (a corrupt or unwritable file, a store that refuses us, a bad key) is one line at start,
// and the service serves without it: the log must never be why requests go unanswered.

import type { IncomingMessage } from 'node:http';
import { describeError } from '../../errors.js';
import { deliveriesKey, type DeliveriesKey } from '../../deliveries/key.js';
import { DeliveryLog } from '../../deliveries/log.js';
import { writerThread, type BatchWriter } from '../../deliveries/writer.js';
import { openDeliveryStore } from '../../deliveries/open.js';
import { withoutPassword, type DeliverySettings, type DeliveryStoreLocation } from '../../deliveries/settings.js';
import type { DeliveryStore } from '../../deliveries/store.js';
import { DeliveryRecording } from './recording.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics.js';
import { ReplayGate } from './replay-gate.js';
import { replayFromLog, type Replayer } from './replays.js';

/** Drops are logged at most this often, with how many since the last line. */
const DROP_LOG_EVERY_MS = 10_000;
/** How often the oldest deliveries are removed past the retention (and once at start). */
const PRUNE_EVERY_MS = 10 * 60_000;

export class DeliveryLogRuntime {
  private replayer: Replayer | null = null;
  private readonly pruning: NodeJS.Timeout;

  private constructor(
    readonly recording: DeliveryRecording,
    readonly gate: ReplayGate | null,
    private readonly log: DeliveryLog,
    private readonly settings: DeliverySettings,
    private readonly logger: Logger,
  ) {
    this.pruning = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruning.unref();
    void this.prune();
  }

  /** null when the log is off or could not be opened (said in one line). */
  static async open(
    settings: DeliverySettings | null,
    env: Readonly<Record<string, string | undefined>>,
    logger: Logger,
    metrics: ServiceMetrics,
    clientIp: (request: IncomingMessage) => string,
    /** A --workers process: the primary has said what is wrong with the store, once for all. */
    quiet: boolean,
  ): Promise<DeliveryLogRuntime | null> {
    if (settings === null) return null;
    const opened = await openLogStore(settings, env, quiet ? null : logger);
    if (opened === null) return null;
    const { store, key } = opened;
    const keys = key.kind === 'key' ? key.keys : null;
    let writer: BatchWriter | undefined;
    try {
      writer = await writerThread(settings.store, keys);
    } catch (error) {
      // The store opened here: a thread that cannot open it too writes from this thread instead.
      if (!quiet) logger.log('warn', 'the delivery log writes from the serving thread: its writer thread could not start', { error: describeError(error) });
    }
    const log = new DeliveryLog(store, keys, throttledDrops(logger, metrics), writer);
    const recording = new DeliveryRecording(log, settings.maxBodyBytes, clientIp);
    return new DeliveryLogRuntime(recording, keys !== null ? new ReplayGate(keys[0]!) : null, log, settings, logger);
  }

  /** Once the service listens at `origin`: replays asked for by `deliveries replay` are sent there. */
  listening(origin: URL): void {
    const keys = this.log.sealingKeys;
    if (this.gate === null || keys === null) return;
    this.replayer = replayFromLog(this.log.store, keys, this.gate, origin, this.logger);
  }

  private async prune(): Promise<void> {
    try {
      const removed = await this.log.prune(Date.now() - this.settings.retentionMs, this.settings.maxRecords);
      if (removed > 0) this.logger.log('info', 'old deliveries removed', { removed });
    } catch (error) {
      this.logger.log('warn', 'old deliveries could not be removed; trying again later', { error: describeError(error) });
    }
  }

  /** Writes what is buffered and closes the store: after the last request has ended. */
  async close(): Promise<void> {
    this.replayer?.stop();
    clearInterval(this.pruning);
    await this.log.close().catch((error: unknown) => this.logger.log('warn', 'the delivery log could not be closed cleanly', { error: describeError(error) }));
  }
}

/**
 * A worker's part of the log: the outcomes of the tasks it runs, written as updates of the
 * deliveries serve recorded. Nothing of a request is kept here, so no key is needed.
 */
export async function openTaskUpdates(location: DeliveryStoreLocation | null, logger: Logger, metrics: ServiceMetrics): Promise<DeliveryLog | null> {
  if (location === null) return null;
  try {
    return new DeliveryLog(await openDeliveryStore(location, true), null, throttledDrops(logger, metrics));
  } catch (error) {
    logger.log('error', `task outcomes are not recorded in the delivery log: ${describeError(error)}`, { store: describeStore(location) });
    return null;
  }
}

/**
 * The store and the key, or null when either is unusable, said in one line to `logger` (null:
 * said elsewhere). The key file is made after the store, which makes the state folder.
 */
export async function openLogStore(
  settings: DeliverySettings,
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger | null,
): Promise<{ readonly store: DeliveryStore; readonly key: Exclude<DeliveriesKey, { kind: 'invalid' }> } | null> {
  let store: DeliveryStore;
  try {
    store = await openDeliveryStore(settings.store, true);
  } catch (error) {
    logger?.log('error', `the delivery log is off: ${describeError(error)}`, { store: describeStore(settings.store) });
    return null;
  }
  const key = deliveriesKey(env, settings.store.kind === 'sqlite' ? settings.store.stateDir : null, true);
  if (key.kind === 'invalid') {
    logger?.log('error', `the delivery log is off: ${key.problem}`);
    await store.close().catch(() => {});
    return null;
  }
  if (key.kind === 'none') logger?.log('warn', `the delivery log keeps no requests (headers and bodies), so none can be replayed or revealed: ${key.why}`);
  return { store, key };
}

export function describeLocation(settings: DeliverySettings): string {
  return describeStore(settings.store);
}

function describeStore(store: DeliveryStoreLocation): string {
  switch (store.kind) {
    case 'sqlite':
      return `SQLite at ${store.file}`;
    case 'redis':
      return `Redis at ${withoutPassword(store.url)}`;
    case 'postgres':
      return `PostgreSQL at ${withoutPassword(store.url)}, schema ${store.schema}`;
  }
}

function throttledDrops(logger: Logger, metrics: ServiceMetrics) {
  let unlogged = 0;
  let lastLine = 0;
  return {
    dropped(count: number, reason: string) {
      metrics.deliveriesNotRecorded(count);
      unlogged += count;
      const now = Date.now();
      if (now - lastLine < DROP_LOG_EVERY_MS) return;
      logger.log('warn', 'deliveries not recorded: the delivery log cannot write to its store; requests are still answered', { dropped: unlogged, reason });
      unlogged = 0;
      lastLine = now;
    },
  };
}
