// A store's failures as the operator reads them: the log and the CLI print an error's message as
// it is, and "database is locked" or "Connection is closed." alone does not say which store.

import type { DeliveryStore } from './store.js';

/** ioredis's words for a command refused because the connection is not up (no offline queue). */
const REDIS_NOT_CONNECTED = "Stream isn't writeable and enableOfflineQueue options is false";

function named(description: string, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  const said = message === REDIS_NOT_CONNECTED ? 'not connected (it is being reconnected)' : message;
  return new Error(`${description} failed: ${said}`, { cause: error });
}

/** `store`, whose every rejection is an Error naming it. */
export function namingErrors(store: DeliveryStore): DeliveryStore {
  const guard =
    <A extends unknown[], R>(method: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await method(...args);
      } catch (error) {
        throw named(store.description, error);
      }
    };
  return {
    description: store.description,
    write: guard(store.write.bind(store)),
    list: guard(store.list.bind(store)),
    get: guard(store.get.bind(store)),
    counts: guard(store.counts.bind(store)),
    prune: guard(store.prune.bind(store)),
    requestReplay: guard(store.requestReplay.bind(store)),
    claimReplay: guard(store.claimReplay.bind(store)),
    finishReplay: guard(store.finishReplay.bind(store)),
    replayOutcome: guard(store.replayOutcome.bind(store)),
    close: guard(store.close.bind(store)),
  };
}
