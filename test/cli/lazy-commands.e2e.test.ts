// Each command's action, and the compiler, server and queue behind it, is loaded only when that
// command runs (src/cli/commands/, docs/performance.md "Libraries loaded on first use"). A static
// import of an action from a command line would load all of it for `--version` and every `--help`
// again: these runs record, through a module loader hook, which of the product's modules the real
// binary loads.
import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, bin, childEnv, contactForm, repoRoot } from './helpers.js';

const ACTIONS = ['validate', 'serve', 'dry-run', 'init', 'worker', 'jobs'].map((name) => `cli/${name}.js`);
const ENGINES = ['compiler/index.js', 'server/serving.js', 'queue/consumer.js', 'runtime/pipeline.js'];

let dir: string;

beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(path.join(tmpdir(), 'es-lazy-commands-'));
  // The hook runs on the loader's thread: it appends each module of dist/ to the file named by MODULE_LOG.
  writeFileSync(
    path.join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  const at = url.indexOf('/dist/');
  if (at >= 0 && !url.includes('/node_modules/')) appendFileSync(process.env.MODULE_LOG, url.slice(at + 6) + '\\n');
  return next(url, context);
}
`,
  );
  writeFileSync(
    path.join(dir, 'register.mjs'),
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(path.join(dir, 'hooks.mjs')).href)});\n`,
  );
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function loadedBy(name: string, args: string[]): Promise<string[]> {
  const log = path.join(dir, `${name}.log`);
  writeFileSync(log, '');
  await execa(process.execPath, ['--import', pathToFileURL(path.join(dir, 'register.mjs')).href, bin, ...args], {
    cwd: repoRoot,
    env: childEnv({ MODULE_LOG: log }),
    reject: false,
    timeout: 30_000,
  });
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

describe('the command line loads a command action only when that command runs', () => {
  it.each([
    ['version', ['--version']],
    ['help', ['--help']],
    ['validate-help', ['validate', '--help']],
    ['serve-help', ['serve', '--help']],
    ['usage-error', ['serve', '--port', 'not-a-port', contactForm]],
  ])('%s loads no action and none of the compiler, server, queue or pipeline', async (name, args) => {
    const loaded = await loadedBy(name, args);
    expect(loaded).toContain('cli/main.js');
    expect(loaded.filter((m) => ACTIONS.includes(m) || ENGINES.includes(m))).toEqual([]);
  });

  it('validate loads its own action and the compiler, and no other action', async () => {
    const loaded = await loadedBy('validate', ['validate', contactForm]);
    expect(loaded).toContain('cli/validate.js');
    expect(loaded).toContain('compiler/index.js');
    expect(loaded.filter((m) => ACTIONS.includes(m) && m !== 'cli/validate.js')).toEqual([]);
  });
});
