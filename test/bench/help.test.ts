// Every script in bench/ answers --help, and an unknown option, with its usage and exits
// without starting anything: a mistyped option must not start a run of several minutes.
// Each script is found by listing bench/, so a new one is covered without being named here.
import { execa } from 'execa';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const benchDir = fileURLToPath(new URL('../../bench/', import.meta.url));
const scripts = readdirSync(benchDir)
  .filter((name) => name.endsWith('.mjs'))
  .sort();

/** A hang guard only (a script that ignored --help would run for minutes), never a speed assertion. */
const GUARD_MS = 20_000;

function run(script: string, args: string[]) {
  return execa(process.execPath, [path.join(benchDir, script), ...args], { reject: false, timeout: GUARD_MS, stdin: 'ignore' });
}

describe('bench scripts', () => {
  it('are all found', () => {
    expect(scripts).toContain('run.mjs');
    expect(scripts).toContain('validate-scale.mjs');
    expect(scripts.length).toBeGreaterThanOrEqual(16);
  });

  for (const script of scripts) {
    it(`${script} --help prints its usage and exits 0`, async () => {
      const result = await run(script, ['--help']);
      expect(result.timedOut, `${script} did not stop`).toBe(false);
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toMatch(/^Usage: /);
      expect(result.stdout).toContain(script);
      expect(result.stderr).toBe('');
    });

    it(`${script} refuses an unknown option with its usage and exit 2`, async () => {
      const result = await run(script, ['--no-such-option']);
      expect(result.timedOut, `${script} did not stop`).toBe(false);
      expect(result.exitCode).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain("Unknown option '--no-such-option'");
      expect(result.stderr).toContain('Usage: ');
    });
  }

  it('run.mjs lists the scenarios in its usage', async () => {
    const result = await run('run.mjs', ['-h']);
    expect(result.exitCode).toBe(0);
    for (const name of ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']) expect(result.stdout).toMatch(new RegExp(`^  ${name}  p\\d-`, 'm'));
  });
});
