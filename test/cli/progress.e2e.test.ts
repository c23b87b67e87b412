// The spinner of a long compile, through the binary on a real pseudo-terminal (util-linux
// `script`): shown on a terminal, on stderr, for validate's text format and serve's start-up;
// never for a program reading the output.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the benchmarks, without types
import { generate } from '../../bench/lib/generate-app.mjs';
import { assertBuilt, childEnv, repoRoot, run } from './helpers.js';

const BIN = path.join(repoRoot, 'bin/endpoint-service.js');
const hasScript = spawnSync('script', ['--version']).status === 0;
if (!hasScript) console.log('progress: no `script` (util-linux) on PATH, so no pseudo-terminal; the spinner tests are skipped');

// Large enough to take well over the half second after which the spinner appears.
const ENDPOINTS = 25_000;
let dir: string;
let file: string;
beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(path.join(tmpdir(), 'es-progress-'));
  generate(dir, ENDPOINTS);
  file = path.join(dir, 'endpoints.xml');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the binary on a pseudo-terminal 100 columns wide; the terminal's output (stdout and stderr together). */
function onTerminal(args: string): string {
  const command = `stty cols 100; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} ${args}`;
  const result = spawnSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8', env: terminalEnv(), timeout: 60_000 });
  return result.stdout;
}

function terminalEnv(): Record<string, string> {
  return childEnv({ CRM_TOKEN: 'x', CI: undefined, TERM: 'xterm' });
}

/** Starts serve on a pseudo-terminal and resolves with what it printed up to its ready line; the hang-up of the terminal then ends it. */
function serveOnTerminal(args: string): Promise<string> {
  const command = `stty cols 100; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} serve ${args}`;
  const child = spawn('script', ['-qec', command, '/dev/null'], { env: terminalEnv(), stdio: ['pipe', 'pipe', 'ignore'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const guard = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`serve was not ready within 60 s:\n${out}`))), 60_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('endpoint-service listening on')) {
        clearTimeout(guard);
        child.kill('SIGTERM');
        resolve(out);
      }
    });
    child.on('exit', () => {
      clearTimeout(guard);
      resolve(out);
    });
  });
}

describe.skipIf(!hasScript)('a spinner while a large file compiles', () => {
  it('shows what validate is doing on a terminal, then the report on a clean line', () => {
    const out = onTerminal(`validate ${JSON.stringify(file)}`);
    expect(out).toMatch(/compiling: [\d,]+ endpoints/);
    expect(out).toContain(`checking ${ENDPOINTS.toLocaleString('en-US')} endpoints`);
    // The spinner's line is cleared before the report is written, and not drawn again after it.
    const summary = out.lastIndexOf('0 errors');
    expect(summary).toBeGreaterThan(0);
    const lastClear = out.lastIndexOf('\x1b[0K');
    expect(lastClear).toBeGreaterThan(out.lastIndexOf('checking'));
    expect(lastClear).toBeLessThan(summary);
  });

  it('never for validate --format json or github, which programs read', () => {
    for (const format of ['json', 'github']) {
      const out = onTerminal(`validate --format ${format} ${JSON.stringify(file)}`);
      expect(out).not.toContain('compiling');
      expect(out).not.toContain('\x1b[');
    }
  });

  it("shows serve's start-up on a terminal, gone before the ready line", async () => {
    const out = await serveOnTerminal(`--port 0 --workers 1 --smtp-url smtp://127.0.0.1:2525 ${JSON.stringify(file)}`);
    const ready = out.indexOf('endpoint-service listening on');
    expect(ready).toBeGreaterThan(0);
    expect(out.lastIndexOf('compiling: ')).toBeGreaterThan(-1);
    expect(out.lastIndexOf('compiling: ')).toBeLessThan(ready);
  });

  it('never without a terminal: stderr of a plain run holds no spinner', async () => {
    const r = await run(['validate', file], { env: { CRM_TOKEN: 'x' } });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).not.toContain('compiling');
    expect(r.stderr + r.stdout).not.toContain('\x1b[1G');
  });
});
