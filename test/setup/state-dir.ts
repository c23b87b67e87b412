// Every serve the tests start records deliveries (docs/deliveries.md): by default into
// `.endpoint-service/` of its working folder, the repository, and with --queue into the queue's
// Redis or PostgreSQL under the namespace `endpoint-service`. This gives the whole run a state
// folder and a namespace of its own (ENDPOINT_SERVICE_STATE_DIR and
// ENDPOINT_SERVICE_DELIVERIES_NAMESPACE, the defaults of --state-dir and
// --deliveries-namespace) and removes all three at the end: the clone stays clean, and what
// the shared stores hold for other runs is never touched. globalSetup in vitest.config.ts, like
// fuzz-seed.ts: the test processes inherit the variables.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { deleteKeys } from '../helpers/redis.js';

const CHOSEN = Symbol.for('endpoint-service.test.state-dir-chosen');

export default function chooseStateDir(): (() => Promise<void>) | void {
  const run = globalThis as { [CHOSEN]?: true };
  if (run[CHOSEN]) return;
  run[CHOSEN] = true;
  const dir = mkdtempSync(path.join(tmpdir(), 'es-state-'));
  const namespace = `es-test-${randomBytes(4).toString('hex')}`;
  process.env.ENDPOINT_SERVICE_STATE_DIR = dir;
  process.env.ENDPOINT_SERVICE_DELIVERIES_NAMESPACE = namespace;
  return async () => {
    rmSync(dir, { recursive: true, force: true });
    const redis = process.env.ENDPOINT_SERVICE_TEST_REDIS_URL || 'redis://127.0.0.1:6379';
    await deleteKeys(redis, [`${namespace}:`]).catch(() => {});
    const postgres = process.env.ENDPOINT_SERVICE_TEST_POSTGRES_URL;
    if (postgres !== undefined && postgres !== '') {
      const client = new pg.Client({ connectionString: postgres, connectionTimeoutMillis: 2000 });
      try {
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${namespace.replace(/-/g, '_')}_deliveries" CASCADE`);
      } catch {
        // No PostgreSQL here: nothing was written to one.
      } finally {
        await client.end().catch(() => {});
      }
    }
  };
}
