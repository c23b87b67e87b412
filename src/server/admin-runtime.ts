// serve's admin listener: the deliveries page (src/admin/), on its own address, never the public
// port. With --workers N the primary serves it (it reads the log's store; nothing it shows lives
// in a worker's memory); with one process, that process. The login URL is logged after the
// ready line: with the token when it was made at start, without it when the operator set
// ENDPOINT_SERVICE_ADMIN_TOKEN (they have it, and a log is no place for it).

import { adminToken, TOKEN_ENV } from '../admin/auth.js';
import { startAdmin, type AdminPage } from '../admin/server.js';
import { openLogStore } from './delivery-log/runtime.js';
import type { Logger } from './log.js';
import { listenFailure, LISTEN_FAILED_EXIT_CODE } from './listen-failure.js';
import type { ServeSettings } from './options.js';

export interface RunningAdmin {
  readonly page: AdminPage;
  /** Whether the token was made at start (so the login URL may carry it). */
  readonly madeToken: boolean;
  close(): Promise<void>;
}

/**
 * The page, when there is one (not with --admin-port none or --deliveries none). `store`: the
 * log's store when this process has it open already; else the page opens its own, and says in
 * one line when it cannot (`logOn` false then: the log's store is unusable for every process).
 */
export async function openAdminPage(
  settings: Pick<ServeSettings, 'admin' | 'deliveries' | 'queue'>,
  endpoints: readonly string[],
  example: () => string | null,
  logger: Logger,
): Promise<{ readonly admin: RunningAdmin | null; readonly logOn: boolean }> {
  const admin = settings.admin;
  const deliveries = settings.deliveries;
  if (deliveries === null) return { admin: null, logOn: false };
  const opened = await openLogStore(deliveries, process.env, logger);
  if (opened === null) return { admin: null, logOn: false };
  const { store, key } = opened;
  if (admin === null) {
    await store.close().catch(() => {});
    return { admin: null, logOn: true };
  }
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
    logOn: true,
    admin: {
      page,
      madeToken,
      async close() {
        await page.close();
        await store.close().catch(() => {});
      },
    },
  };
}

/** After the ready line. */
export function logAdminPage(admin: RunningAdmin | null, logger: Logger): void {
  if (admin === null) return;
  if (admin.madeToken) logger.log('info', `the deliveries page: ${admin.page.loginUrl}`, { url: admin.page.loginUrl });
  else logger.log('info', `the deliveries page: ${admin.page.url} (log in with ${TOKEN_ENV}: ${admin.page.url}?token=…)`, { url: admin.page.url });
}
