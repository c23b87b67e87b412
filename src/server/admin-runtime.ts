// serve's admin listener: the deliveries page (src/admin/), on its own address, never the public
// port. With --workers N the primary serves it (it reads the log's store; nothing it shows lives
// in a worker's memory); with one process, that process. The login URL is logged after the
// ready line: with the token when it was made at start, without it when the operator set
// ENDPOINT_SERVICE_ADMIN_TOKEN (they have it, and a log is no place for it).

import { adminToken, TOKEN_ENV } from '../admin/auth.js';
import { startAdmin, type AdminPage } from '../admin/server.js';
import { deliveriesKey } from '../deliveries/key.js';
import { openDeliveryStore } from '../deliveries/open.js';
import type { DeliveryStore } from '../deliveries/store.js';
import { describeError } from '../errors.js';
import type { Logger } from './log.js';
import { listenFailure, LISTEN_FAILED_EXIT_CODE } from './listen-failure.js';
import type { ServeSettings } from './options.js';

export interface RunningAdmin {
  readonly page: AdminPage;
  /** Whether the token was made at start (so the login URL may carry it). */
  readonly madeToken: boolean;
  close(): Promise<void>;
}

/** null when there is no page (--admin-port none, --deliveries none) or it could not be opened (said in one line). */
export async function openAdminPage(
  settings: Pick<ServeSettings, 'admin' | 'deliveries' | 'queue'>,
  endpoints: readonly string[],
  example: () => string | null,
  logger: Logger,
): Promise<RunningAdmin | null> {
  const admin = settings.admin;
  const deliveries = settings.deliveries;
  if (admin === null || deliveries === null) return null;
  let store: DeliveryStore;
  try {
    store = await openDeliveryStore(deliveries.store, true);
  } catch (error) {
    logger.log('error', `the deliveries page is off: ${describeError(error)}`);
    return null;
  }
  const key = deliveriesKey(process.env, deliveries.store.kind === 'sqlite' ? deliveries.store.stateDir : null, true);
  const madeToken = (process.env[TOKEN_ENV] ?? '').trim() === '';
  const token = adminToken(process.env);
  let page: AdminPage;
  try {
    page = await startAdmin(admin.host, admin.port, {
      store,
      keys: key.kind === 'key' ? key.keys : null,
      token,
      queue: settings.queue,
      example,
      endpoints,
      log: (level, message, fields) => logger.log(level, message, fields),
    });
  } catch (error) {
    await store.close().catch(() => {});
    // An --admin-port in use is the operator's to fix, as a --port in use is.
    process.stderr.write(`endpoint-service: the admin listener: ${listenFailure(error as NodeJS.ErrnoException, admin.host, admin.port)}\n`);
    process.exit(LISTEN_FAILED_EXIT_CODE);
  }
  return {
    page,
    madeToken,
    async close() {
      await page.close();
      await store.close().catch(() => {});
    },
  };
}

/** After the ready line. */
export function logAdminPage(admin: RunningAdmin | null, logger: Logger): void {
  if (admin === null) return;
  if (admin.madeToken) logger.log('info', `the deliveries page: ${admin.page.loginUrl}`, { url: admin.page.loginUrl });
  else logger.log('info', `the deliveries page: ${admin.page.url} (log in with ${TOKEN_ENV}: ${admin.page.url}?token=…)`, { url: admin.page.url });
}
