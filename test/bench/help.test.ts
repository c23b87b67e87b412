// Every script in bench/ answers --help, and an unknown option, with its usage and exits
// without starting anything: a mistyped option must not start a run of several minutes.
// Each script is found by walking bench/ and its folders (scenarios/, baselines/, peers/, and any
// added later), so a new one is covered without being named here. bench/lib/ holds modules the
// scripts import, not commands.
import { execa } from 'execa';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const benchDir = fileURLToPath(new URL('../../bench/', import.meta.url));

/** The .mjs files under `dir`, as paths relative to bench/ with forward slashes ('scenarios/p1-query.mjs'). */
function scriptsIn(dir: string): string[] {
  return readdirSync(path.join(benchDir, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) return relative === 'lib' ? [] : scriptsIn(relative);
    return entry.name.endsWith('.mjs') ? [relative] : [];
  });
}
const scripts = scriptsIn('').sort();

/** A hang guard only (a script that ignored --help would run for minutes), never a speed assertion. */
const GUARD_MS = 20_000;

function run(script: string, args: string[]) {
  return execa(process.execPath, [path.join(benchDir, script), ...args], { reject: false, timeout: GUARD_MS, stdin: 'ignore' });
}

describe('bench scripts', () => {
  it('are all found, in every group', () => {
    expect(scripts).toContain('run.mjs');
    expect(scripts).toContain('scenarios/p1-query.mjs');
    expect(scripts).toContain('scenarios/validate-scale.mjs');
    expect(scripts).toContain('baselines/p1-baseline.mjs');
    expect(scripts).toContain('peers/upstream.mjs');
    expect(scripts.filter((s) => s.startsWith('lib/'))).toEqual([]);
    expect(scripts.length).toBeGreaterThanOrEqual(30);
  });

  for (const script of scripts) {
    it(`${script} --help prints its usage and exits 0`, async () => {
      const result = await run(script, ['--help']);
      expect(result.timedOut, `${script} did not stop`).toBe(false);
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toMatch(/^Usage: /);
      // The usage names the script by the path it is run by, from the repository's root.
      expect(result.stdout).toContain(`bench/${script}`);
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

  it('run.mjs lists the scenarios in its usage, each a script of bench/scenarios/', async () => {
    const result = await run('run.mjs', ['-h']);
    expect(result.exitCode).toBe(0);
    for (const name of ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']) expect(result.stdout).toMatch(new RegExp(`^  ${name} +p\\d-`, 'm'));
    const listed = [...result.stdout.matchAll(/^ {2}p\d+[a-z]? +(\S+\.mjs) /gm)].map((m) => m[1]!);
    expect(listed.length).toBeGreaterThanOrEqual(18);
    expect(listed.filter((script) => !existsSync(path.join(benchDir, 'scenarios', script)))).toEqual([]);
  });
});
