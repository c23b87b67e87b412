// dry-run and <deduplicate>/<sign>: the plan names each endpoint's key (expanded from --header,
// --body and --param), says deduplication is not checked, and shows a relay's signed headers,
// with the downstream keys serve derives from the delivery rather than the request.
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { dryRun } from './run.js';
import { idempotencyKey } from '../../src/tasks/http-request/prepare.js';

const DEDUP = fileURLToPath(new URL('../../fixtures/serve/dedup/endpoints.xml', import.meta.url));
const RELAY = fileURLToPath(new URL('../../fixtures/serve/relay/endpoints.xml', import.meta.url));
const env = { PEER: 'http://peer.example', RELAY_SECRET: 'whsec_' + Buffer.from('relay').toString('base64') };
const body = path.join(mkdtempSync(path.join(tmpdir(), 'es-dedup-')), 'event.json');
writeFileSync(body, '{"id":"evt_1","order":"A-7"}');

interface Doc {
  endpoints: {
    name: string;
    deduplication?: { key: string; for: string; expanded: string | null; note: string };
    tasks: { id: string; request?: { headers: Record<string, string> } }[];
  }[];
}

describe('dry-run and <deduplicate>', () => {
  it('names the key and window of each endpoint that has one, and none for the others', async () => {
    const run = await dryRun([DEDUP, '--format', 'json'], env);
    expect(run.exitCode).toBe(0);
    const doc = JSON.parse(run.stdout) as Doc;
    const by = new Map(doc.endpoints.map((e) => [e.name, e.deduplication]));
    expect(by.get('delivery')).toEqual({ key: '${delivery}', for: '1h', expanded: null, note: expect.stringContaining('not checked') as unknown });
    expect(by.get('api')?.key).toBe('${idem}');
    expect(by.get('background')?.for).toBe('1d');
    const relay = JSON.parse((await dryRun([RELAY, '--format', 'json'], env)).stdout) as Doc;
    expect(relay.endpoints.find((e) => e.name === 'relay')!.deduplication).toBeUndefined();
  });

  it('expands the key from --header for a simulated request; the tasks send keys derived from it', async () => {
    const run = await dryRun([DEDUP, '--endpoint', 'delivery', '--header', 'X-Delivery-Id: evt_1', '--body', body, '--format', 'json'], env);
    expect(run.exitCode).toBe(0);
    const endpoint = (JSON.parse(run.stdout) as Doc).endpoints[0]!;
    expect(endpoint.deduplication?.expanded).toBe('evt_1');
    const delivery = createHash('sha256').update('delivery\nevt_1').digest('hex');
    expect(endpoint.tasks[0]!.request!.headers['idempotency-key']).toBe(idempotencyKey(delivery, 'delivery', 'crm'));

    const text = await dryRun([DEDUP, '--endpoint', 'delivery', '--header', 'X-Delivery-Id: evt_1', '--body', body], env);
    expect(text.stdout).toContain('deduplicates  key ${delivery} for 1h');
    expect(text.stdout).toContain('key "evt_1"');
    expect(text.stdout).toContain('deduplication is not checked in a simulation');
  });

  it('says a blank key is not deduplicated', async () => {
    const run = await dryRun([DEDUP, '--endpoint', 'delivery', '--body', body], env);
    expect(run.stdout).toContain('the key is blank for this request: it is not deduplicated');
  });
});

describe('dry-run and <sign>', () => {
  it('shows the signed headers as sent: the webhook-id, and what each attempt adds', async () => {
    const run = await dryRun([RELAY, '--endpoint', 'once', '--header', 'X-Delivery-Id: evt_1', '--body', body, '--format', 'json'], env);
    expect(run.exitCode).toBe(0);
    const headers = (JSON.parse(run.stdout) as Doc).endpoints[0]!.tasks[0]!.request!.headers;
    expect(headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(headers['webhook-timestamp']).toBe('<unix time of each attempt>');
    expect(headers['webhook-signature']).toMatch(/^v1,</);
    expect(JSON.stringify(headers)).not.toContain(env.RELAY_SECRET);
    // The id follows the delivery, not the simulated request.
    const other = await dryRun([RELAY, '--endpoint', 'once', '--header', 'X-Delivery-Id: evt_2', '--body', body, '--format', 'json'], env);
    expect((JSON.parse(other.stdout) as Doc).endpoints[0]!.tasks[0]!.request!.headers['webhook-id']).not.toBe(headers['webhook-id']);
  });
});
