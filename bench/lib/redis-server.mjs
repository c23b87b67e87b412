// A redis-server of the scenario's own, on a free port, for the queue scenarios: the shared one
// on 6379 serves other runs, whose load would be measured too. Nothing is kept on disk (the
// service logs a warning about that, which the scenarios do not read). redis-server must be on
// PATH; startRedis() resolves null when it is not, and the scenario reports itself skipped.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { LOAD_CPU, startProcess } from './common.mjs';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** { url, pid, stop() } of a fresh redis-server on `cpu` (the load core by default), or null without redis-server. */
export async function startRedis({ cpu = LOAD_CPU } = {}) {
  if (spawnSync('redis-server', ['--version']).error?.code === 'ENOENT') return null;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'es-bench-redis-'));
  const port = await freePort();
  const server = await startProcess(['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    cpu,
    ready: /(Ready to accept connections)/,
    timeoutMs: 20_000,
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: server.pid,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
