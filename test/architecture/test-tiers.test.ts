// docs/architecture.md, "Habits": one naming rule decides the tier of a test file. A file that
// starts the built binary (bin/endpoint-service.js) or talks to a Redis or PostgreSQL store is
// named *.e2e.test.ts, so `npm run test:unit` never needs a build or a store and stays fast.
// Read from the source text: the spawning helpers of test/ are named below, and a new module of
// test/ that starts the binary without being named here fails the last check.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SLOW } from '../../vitest.config.js';
import { repoRoot } from '../cli/helpers.js';

const TEST = path.join(repoRoot, 'test');

/** The exports of test/ modules that start the binary or reach a store, by module. */
const REACHING_OUT: Readonly<Record<string, readonly string[]>> = {
  'test/helpers/serve.ts': ['startServe', 'runServeToExit', 'StartedServices'],
  'test/helpers/queue.ts': ['startWorker', 'runCli', 'queueBackends', 'redisBackend', 'stoppableStore', 'spawnRedis', 'testRedisUrl'],
  'test/helpers/redis.ts': ['spawnRedis', 'testRedisUrl', 'keysUnder', 'deleteKeys'],
  'test/helpers/durable-rig.ts': ['DurableRig'],
  'test/cli/helpers.ts': ['run'],
  'test/dry-run/run.ts': ['dryRun', 'dryRunJson'],
  // vitest's globalSetup: it cleans the run's namespace out of the stores, and no test imports it.
  'test/setup/state-dir.ts': [],
};

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const rel = (file: string) => path.relative(repoRoot, file);
const NAMED_IMPORT = /\bimport\s*(type\s+)?\{([^}]*)\}\s*from\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** Why the file at `file` (relative to the repository) with source `text` is end-to-end, or [] if it is not. */
export function reachesOut(file: string, text: string): string[] {
  const reasons: string[] = [];
  for (const match of text.matchAll(NAMED_IMPORT)) {
    const target = path.join(path.dirname(file), (match[3] ?? match[4])!).replace(/\.js$/, '.ts');
    const exported = REACHING_OUT[target];
    if (exported === undefined) continue;
    if (match[4] !== undefined) {
      // A dynamic import takes the whole module: what it then uses is read from the text.
      reasons.push(...exported.filter((name) => new RegExp(`\\b${name}\\b`).test(text)).map((name) => `${name} from ${target}`));
      continue;
    }
    if (match[1] !== undefined) continue;
    for (const item of match[2]!.split(',')) {
      const name = item
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)[0]!;
      if (!item.trim().startsWith('type ') && exported.includes(name)) reasons.push(`${name} from ${target}`);
    }
  }
  const spawns = /from\s*['"](?:node:)?child_process['"]|import\(\s*['"](?:node:)?child_process['"]\s*\)|from\s*['"]execa['"]/.test(text);
  if (spawns && /bin\/endpoint-service/.test(text)) reasons.push('starts bin/endpoint-service.js itself');
  if (/ENDPOINT_SERVICE_TEST_POSTGRES_URL|from\s*['"](?:ioredis|pg|bullmq)['"]/.test(text)) reasons.push('talks to a store');
  return reasons;
}

// This file is left out: its own examples below would match.
const files = filesUnder(TEST)
  .filter((full) => full !== fileURLToPath(import.meta.url))
  .map((full) => ({ file: rel(full), text: readFileSync(full, 'utf8') }));
const testFiles = files.filter((f) => f.file.endsWith('.test.ts'));

describe('test tiers', () => {
  it('finds the test files and the modules they share (else this test checks nothing)', () => {
    expect(testFiles.length).toBeGreaterThan(100);
    for (const module of Object.keys(REACHING_OUT)) expect(existsSync(path.join(repoRoot, module)), module).toBe(true);
    expect(testFiles.filter((f) => reachesOut(f.file, f.text).length > 0).length).toBeGreaterThan(60);
  });

  it('names every test file that starts the binary or talks to a store *.e2e.test.ts', () => {
    const misnamed = testFiles
      .filter((f) => !f.file.endsWith('.e2e.test.ts'))
      .map((f) => ({ file: f.file, reasons: reachesOut(f.file, f.text) }))
      .filter((f) => f.reasons.length > 0)
      .map((f) => `${f.file}: ${f.reasons.join(', ')}`);
    expect(misnamed).toEqual([]);
  });

  it('recognises each way of starting the binary', () => {
    const file = 'test/serve/example.test.ts';
    expect(reachesOut(file, "import { fixture, startServe } from '../helpers/serve.js';")).toEqual(['startServe from test/helpers/serve.ts']);
    expect(reachesOut(file, "import { fixture, type RunningService } from '../helpers/serve.js';")).toEqual([]);
    expect(reachesOut(file, "import type { startServe } from '../helpers/serve.js';")).toEqual([]);
    expect(reachesOut(file, "import { run as cli } from '../cli/helpers.js';")).toEqual(['run from test/cli/helpers.ts']);
    expect(reachesOut(file, "const { runCli } = await import('../helpers/queue.js');")).toEqual(['runCli from test/helpers/queue.ts']);
    expect(reachesOut(file, "import { execa } from 'execa';\nconst BIN = 'bin/endpoint-service.js';")).toEqual(['starts bin/endpoint-service.js itself']);
    expect(reachesOut(file, "import { Redis } from 'ioredis';")).toEqual(['talks to a store']);
  });

  it('knows every module of test/ that starts the binary or reaches a store', () => {
    const unknown = files
      .filter((f) => !f.file.endsWith('.test.ts') && REACHING_OUT[f.file] === undefined)
      .filter((f) => reachesOut(f.file, f.text).length > 0)
      .map((f) => `${f.file}: ${reachesOut(f.file, f.text).join(', ')} (add its exports to REACHING_OUT)`);
    expect(unknown).toEqual([]);
  });

  it('lists only slow files that exist', () => {
    expect(SLOW.filter((file) => !existsSync(path.join(repoRoot, file)))).toEqual([]);
  });
});
