// The Redis client for state that the instances of a service share and that a request waits for:
// rate-limit counts and spent ALTCHA solutions (--rate-limit-store, or the queue's Redis). One
// place, so every such use waits the same bounded time for Redis.
//
// What the request does when Redis cannot answer is its caller's rule (a rate limit lets it
// through, an ALTCHA check refuses it); this client only makes sure it learns so quickly,
// whether Redis refuses connections, is away, or has stopped answering on an open connection
// (an fsync or fork stall, a paused process): without a command timeout, that last case held
// every such request until --request-timeout.
//
// The bound is not ioredis's commandTimeout. Its timer fires in the timers phase of the event
// loop, before the poll phase reads the socket: a process that was itself held up (a busy start,
// a loaded machine) took an answer already waiting in the socket for a Redis that did not answer,
// and let requests through uncounted. Here the expired bound looks again after the poll phase
// (setImmediate), so only a command whose answer has truly not come is failed.

import type { Command, Redis } from 'ioredis';

/** Longest wait for one command's answer: a stalled Redis costs a request this much, not its timeout. */
export const SHARED_STATE_COMMAND_TIMEOUT_MS = 250;
/** Longest wait for a connection, and for the first one at start-up. */
const CONNECT_TIMEOUT_MS = 2000;

export interface SharedStateEvents {
  /** The first failure after the store was reachable (or at start); not repeated until it is back. */
  readonly unreachable: (error: Error) => void;
  /** Reachable again after `unreachable`. */
  readonly reachable: () => void;
}

/**
 * Connects to `url` and resolves once the first attempt is over (ready, failed, or not done within
 * the connect timeout): the service starts either way, and a command while Redis is away fails at
 * once rather than being queued.
 */
export async function openSharedState(url: string, events: SharedStateEvents): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  boundCommands(redis, SHARED_STATE_COMMAND_TIMEOUT_MS);
  let reported = false;
  redis.on('error', (error: Error) => {
    if (reported) return;
    reported = true;
    events.unreachable(error);
  });
  redis.on('ready', () => {
    if (reported) events.reachable();
    reported = false;
  });
  await new Promise<void>((resolve) => {
    // A Redis that accepts the connection but never answers (stopped) would otherwise hold the start.
    const timer = setTimeout(done, CONNECT_TIMEOUT_MS);
    function done(): void {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('error', done);
      resolve();
    }
    redis.once('ready', done);
    redis.once('error', done);
  });
  return redis;
}

/** Every command `redis` sends fails with "Command timed out" when no answer has come `ms` after it was given (the ready check's too). */
export function boundCommands(redis: Redis, ms: number): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command: Command, stream?: Parameters<Redis['sendCommand']>[1]) => {
    const sent = send(command, stream);
    const timer = setTimeout(
      () =>
        // After the poll phase: an answer that came while this process was held up settles the command first.
        setImmediate(() => {
          if (!command.isResolved) command.reject(new Error('Command timed out'));
        }),
      ms,
    );
    const clear = () => clearTimeout(timer);
    command.promise.then(clear, clear);
    return sent;
  };
}
