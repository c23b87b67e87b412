// The launcher on a Node.js older than `engines` allows: one line that says what to do, exit 2,
// before anything of the program loads. The older version is simulated with an --import that
// rewrites process.versions.node, since the machine running the tests has a supported one.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bin, repoRoot, run } from './helpers.js';

const pretend = (version: string) => ({
  // Percent-encoded: NODE_OPTIONS drops the quotes a plain data: URL would carry.
  NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(`Object.defineProperty(process.versions, 'node', { value: '${version}' })`)}`,
});

describe('the supported Node.js versions', () => {
  it('refuses an older Node.js in one line, exit 2, without a stack trace', async () => {
    for (const version of ['20.20.2', '22.14.0', '18.0.0']) {
      const r = await run(['validate', 'fixtures/contact-form/endpoints.xml'], { env: pretend(version) });
      expect(r.exitCode).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `endpoint-service needs Node.js 22.15 or later (22, 24 and 26 are supported); this is Node.js ${version}. Install a supported version and run it again.\n`,
      );
    }
  });

  it('runs on the oldest supported version and later ones', async () => {
    for (const version of ['22.15.0', '24.0.0', '26.1.0']) {
      const r = await run(['--version'], { env: pretend(version) });
      expect(r.exitCode).toBe(0);
      expect(r.stderr).toBe('');
    }
  });

  it('keeps the launcher and package.json on one oldest version', () => {
    const engines = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    const launcher = /const OLDEST = \[(\d+), (\d+)\]/.exec(readFileSync(bin, 'utf8'));
    expect(launcher).not.toBeNull();
    expect(engines).toBe(`>=${launcher![1]}.${launcher![2]}`);
  });
});
