// The PostgreSQL delivery store on ENDPOINT_SERVICE_TEST_POSTGRES_URL (CI sets it): the contract
// every store keeps, each store in a schema of its own, dropped afterwards (the database may be
// shared with other runs). Unset, the suite is skipped with one line; set but unreachable, it is
// skipped the same way, except under CI=true, where that fails the run.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/deliveries/postgres-store.js';
import { POSTGRES_SCHEMA_VERSION } from '../../src/deliveries/postgres-schema.js';
import { freePort } from '../helpers/redis.js';
import { delivery, deliveryStoreContract, record, T0 } from './store-contract.js';

async function postgresUrl(): Promise<string | null> {
  const url = process.env.ENDPOINT_SERVICE_TEST_POSTGRES_URL;
  if (url === undefined || url === '') {
    console.warn('skipped: no PostgreSQL for the delivery store suite: set ENDPOINT_SERVICE_TEST_POSTGRES_URL (as postgres://postgres@127.0.0.1:5432/test)');
    return null;
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return url;
  } catch (error) {
    const message = `ENDPOINT_SERVICE_TEST_POSTGRES_URL cannot be reached: ${(error as Error).message}`;
    if (process.env.CI === 'true') throw new Error(message, { cause: error });
    console.warn(`skipped: ${message}`);
    return null;
  } finally {
    await client.end().catch(() => {});
  }
}

const POSTGRES_URL = await postgresUrl();
const schemas: string[] = [];
const newSchema = () => {
  const schema = `es_test_deliveries_${process.pid}_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  return schema;
};

afterAll(async () => {
  if (POSTGRES_URL === null || schemas.length === 0) return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
});

describe.skipIf(POSTGRES_URL === null)('the PostgreSQL delivery store', () => {
  const url = POSTGRES_URL!;

  deliveryStoreContract(async () => {
    const schema = newSchema();
    return { open: () => openPostgresStore(url, schema) };
  });

  it('makes its tables once when several processes open a new schema at the same moment', async () => {
    const schema = newSchema();
    const stores = await Promise.all(Array.from({ length: 4 }, () => openPostgresStore(url, schema)));
    try {
      await stores[0]!.write([delivery(record('req-1', T0))]);
      expect(await stores[3]!.get('req-1')).not.toBeNull();
      expect(stores[0]!.description).toBe(`PostgreSQL at ${url}, schema ${schema}`);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('refuses a schema a newer version made', async () => {
    const schema = newSchema();
    await (await openPostgresStore(url, schema)).close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`UPDATE "${schema}".meta SET value = '${POSTGRES_SCHEMA_VERSION + 1}' WHERE key = 'schema_version'`);
    await client.end();
    await expect(openPostgresStore(url, schema)).rejects.toThrow(
      `PostgreSQL at ${url}, schema ${schema} was made by a newer endpoint-service (schema version ${POSTGRES_SCHEMA_VERSION + 1}; this one knows ${POSTGRES_SCHEMA_VERSION}): run that version, or give another schema`,
    );
  });

  it('brings a schema of version 1 up to date: it gains the table of sealed groups', async () => {
    const schema = newSchema();
    await (await openPostgresStore(url, schema)).close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`DROP TABLE "${schema}".delivery_groups`);
      await client.query(`UPDATE "${schema}".meta SET value = '1' WHERE key = 'schema_version'`);
      const store = await openPostgresStore(url, schema);
      await store.write([{ kind: 'sealed-group', id: 'req-1', sealed: 'QUJD' }, delivery(record('req-1', T0), 'g.req-1')]);
      expect((await store.get('req-1'))!.sealed).toBe('g.req-1.QUJD');
      await store.close();
      expect((await client.query(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`)).rows[0].value).toBe(String(POSTGRES_SCHEMA_VERSION));
    } finally {
      await client.end();
    }
  });

  it('refuses to open when PostgreSQL cannot be reached, naming it by its URL without the password', async () => {
    const port = await freePort();
    await expect(openPostgresStore(`postgres://postgres:secret@127.0.0.1:${port}/test`, 'deliveries')).rejects.toThrow(
      new RegExp(`^PostgreSQL at postgres://postgres@127\\.0\\.0\\.1:${port}/test, schema deliveries cannot be reached: .*ECONNREFUSED`),
    );
  });
});
