// The delivery log never costs an answer (docs/deliveries.md, "Recording never holds up an
// answer"): a database file that is not one is one line at start and serving goes on; a store
// that goes down is counted and logged while requests are answered; SIGTERM writes what the
// buffer holds before the process exits, and a kill -9 loses only the batch not yet written.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../cli/helpers.js';
import { HttpPeer } from '../helpers/http-peer.js';
import { spawnRedis } from '../helpers/redis.js';
import { fixture, startServe } from '../helpers/serve.js';

describe('the delivery log when its store fails', () => {
  let peer: HttpPeer;
  const dirs: string[] = [];
  const stateDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'es-faults-'));
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    peer = await HttpPeer.start();
    peer.route('/crm', { status: 200, body: 'ok' });
  });

  afterAll(async () => {
    await peer.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('serves on, with one line, when the database file is not a database', async () => {
    const dir = stateDir();
    writeFileSync(path.join(dir, 'deliveries.db'), 'this is not a SQLite database, just some text that is long enough to be read as a header page');
    const service = await startServe(fixture('deliveries'), ['--state-dir', dir], { PEER: peer.origin });
    try {
      expect((await fetch(`${service.url}/limited`)).status).toBe(200);
      await service.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('the delivery log is off:'));
      const off = service.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('the delivery log is off:'));
      expect(off).toHaveLength(1);
      expect(off[0]!.msg).toContain('deliveries.db');
      expect(service.stderr()).not.toMatch(/\n\s+at /);
    } finally {
      await service.stop();
    }
  });

  it('answers every request while a Redis store is down, and counts what it could not record', async () => {
    const redis = await spawnRedis();
    if (redis === null) return;
    const service = await startServe(fixture('deliveries'), ['--deliveries', redis.url], { PEER: peer.origin, ENDPOINT_SERVICE_DELIVERIES_KEY: undefined });
    try {
      await redis.stop();
      for (let i = 0; i < 5; i++) expect((await fetch(`${service.url}/limited?i=${i}`)).status).toBeLessThan(500);
      const metric = async () => {
        const text = await (await fetch(`${service.url}/_metrics`)).text();
        return Number(/^endpoint_service_deliveries_dropped_total (\d+)/m.exec(text)?.[1] ?? '0');
      };
      for (let i = 0; (await metric()) === 0; i++) {
        if (i > 50) throw new Error('no drop was counted');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await service.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('deliveries not recorded'));
    } finally {
      await service.stop();
      await redis.stop();
    }
  });

  it('writes what the buffer holds on SIGTERM', async () => {
    const dir = stateDir();
    const service = await startServe(fixture('deliveries'), ['--state-dir', dir], { PEER: peer.origin });
    const response = await fetch(`${service.url}/limited`);
    const id = response.headers.get('x-request-id')!;
    const exit = await service.stop();
    expect(exit.code).toBe(0);
    const shown = await run(['deliveries', 'show', id, '--state-dir', dir]);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('accepted (200)');
  });

  it('loses to a kill -9 only what the last batch had not written: what came before is in the log', async () => {
    const dir = stateDir();
    const service = await startServe(fixture('deliveries'), ['--state-dir', dir], { PEER: peer.origin });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await fetch(`${service.url}/limited`)).headers.get('x-request-id')!);
    // A batch is written 100 ms after the previous one began (docs/deliveries.md); the rest of
    // the wait is room for that write on a busy machine.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const exit = await service.stop('SIGKILL');
    expect(exit.signal).toBe('SIGKILL');
    const listed = await run(['deliveries', 'list', '--format', 'json', '--limit', '100', '--state-dir', dir]);
    expect(listed.exitCode, listed.stderr).toBe(0);
    const seen = (JSON.parse(listed.stdout) as { deliveries: { id: string }[] }).deliveries.map((d) => d.id);
    expect(seen.sort()).toEqual([...ids].sort());
  });
});
