// Every serve the tests start records deliveries (docs/deliveries.md), by default into
// `.endpoint-service/` of its working folder, the repository. This gives the whole run a state
// folder of its own (ENDPOINT_SERVICE_STATE_DIR, which --state-dir defaults to) and removes it
// at the end: the clone stays clean, and a developer's own log is never written by a test.
// globalSetup in vitest.config.ts, like fuzz-seed.ts: the test processes inherit the variable.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const CHOSEN = Symbol.for('endpoint-service.test.state-dir-chosen');

export default function chooseStateDir(): (() => void) | void {
  const run = globalThis as { [CHOSEN]?: true };
  if (run[CHOSEN]) return;
  run[CHOSEN] = true;
  const dir = mkdtempSync(path.join(tmpdir(), 'es-state-'));
  process.env.ENDPOINT_SERVICE_STATE_DIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
