// Without --queue, nothing of bullmq or ioredis is loaded: validate, dry-run and serve start as
// they did. Module resolution is watched by a loader hook in the real binary; serve --queue is
// the control that shows the hook sees them when they are loaded.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { ModuleWatch } from '../helpers/loaded-modules.js';
import { ROOT } from '../helpers/serve.js';
import { QUEUE_KEY, queueFixture } from '../helpers/queue.js';

const watch = ModuleWatch.create(/node_modules\/(bullmq|ioredis|pg)\//);
afterAll(() => watch.remove());

/** Runs the binary with the hook until `until` says it is done (or it exits); the queue modules it resolved. */
async function loadedBy(args: string[], env: Record<string, string>, until?: (stdout: string) => Promise<void>): Promise<string[]> {
  const run = watch.run();
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/endpoint-service.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ENDPOINT_SERVICE_QUEUE_URL: undefined, ...env, ...run.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  if (until !== undefined) {
    while (!out.includes('listening on') && child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
    await until(out);
    child.kill('SIGTERM');
  }
  await exited;
  return run.loaded();
}

describe('bullmq and ioredis are loaded only with --queue', () => {
  const file = queueFixture('basic');
  const smtp = ['--smtp-url', 'smtp://127.0.0.1:1'];

  it('validate and dry-run load neither', async () => {
    expect(await loadedBy(['validate', file], {})).toEqual([]);
    expect(await loadedBy(['dry-run', file, ...smtp], {})).toEqual([]);
  });

  it('serve without --queue loads neither, even running a background endpoint', async () => {
    const peer = await HttpPeer.start();
    peer.route('/ping', { status: 200 });
    try {
      const loaded = await loadedBy(['serve', file, '--port', '0', '--workers', '1', ...smtp], { PEER: peer.origin, CRM_KEY: 'k' }, async (out) => {
        const origin = /listening on (\S+)/.exec(out)![1]!;
        expect((await fetch(`${origin}/ping`)).status).toBe(200);
        await peer.waitForRequests(1, '/ping');
      });
      expect(loaded).toEqual([]);
    } finally {
      await peer.close();
    }
  });

  it('serve --queue loads them (the hook sees them when they are loaded)', async () => {
    const loaded = await loadedBy(
      ['serve', file, '--port', '0', '--workers', '1', '--queue', 'redis://127.0.0.1:1', ...smtp],
      { ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY, PEER: 'http://127.0.0.1:1', CRM_KEY: 'k' },
      async () => {
        await new Promise((r) => setTimeout(r, 300));
      },
    );
    expect(loaded.some((url) => url.includes('/bullmq/'))).toBe(true);
    expect(loaded.some((url) => url.includes('/ioredis/'))).toBe(true);
  });
});
