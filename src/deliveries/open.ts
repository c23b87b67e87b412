// Opens the store a location names, loading its client only then: serve without a shared store
// never loads ioredis or pg for the log, and one with --deliveries none loads nothing of it.

import { existsSync, mkdirSync } from 'node:fs';
import type { DeliveryStoreLocation } from './settings.js';
import type { DeliveryStore } from './store.js';

/** A store the command line names that holds nothing yet: the embedded file not made. */
export class NoStoreYet extends Error {
  override readonly name = 'NoStoreYet';
}

/** `create`: serve makes the state folder and the file; the CLI only reads what is there. */
export async function openDeliveryStore(location: DeliveryStoreLocation, create: boolean): Promise<DeliveryStore> {
  switch (location.kind) {
    case 'sqlite': {
      if (create) mkdirSync(location.stateDir, { recursive: true, mode: 0o700 });
      else if (!existsSync(location.file)) throw new NoStoreYet(`no deliveries have been recorded in ${location.stateDir}/ (there is no ${location.file})`);
      const { openSqliteStore } = await import('./sqlite-store.js');
      return openSqliteStore(location.file);
    }
    case 'redis': {
      const { openRedisStore } = await import('./redis-store.js');
      return openRedisStore(location.url, location.prefix);
    }
    case 'postgres': {
      const { openPostgresStore } = await import('./postgres-store.js');
      return openPostgresStore(location.url, location.schema);
    }
  }
}
