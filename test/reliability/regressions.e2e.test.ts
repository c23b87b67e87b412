// Cases found by the reliability suites (fuzzing first of all), kept as fixtures so they stay
// fixed: fixtures/regressions/<name>/ holds the application and an expect.txt with the
// exact diagnostics, in the format of fixtures/invalid (`expect: SEVERITY CODE [FILE:]LINE:COLUMN`,
// `mode: serve|dry-run`). Each is checked in-process (exact diagnostics) and through the
// built `validate` (exit 0 or 1, no stack trace, no "undefined" in the report).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileApplication, type CompileMode } from '../../src/compiler/index.js';
import { TASK_KINDS } from '../../src/tasks/registry.js';
import { STACK_TRACE, assertBuilt, repoRoot, run } from '../cli/helpers.js';

const DIR = path.join(repoRoot, 'fixtures/regressions');

interface Spec {
  readonly name: string;
  readonly file: string;
  readonly mode: CompileMode;
  readonly expected: readonly string[];
}

function readSpec(name: string): Spec {
  const dir = path.join(DIR, name);
  let mode: CompileMode = 'validate';
  const expected: string[] = [];
  for (const raw of readFileSync(path.join(dir, 'expect.txt'), 'utf8').split('\n')) {
    const line = raw.trim();
    let m: RegExpExecArray | null;
    if ((m = /^expect: (error|warning) ([a-z0-9-]+) (?:(.+):)?(\d+):(\d+)$/.exec(line))) {
      expected.push(`${m[1]} ${m[2]} ${m[3] ?? 'endpoints.xml'}:${m[4]}:${m[5]}`);
    } else if ((m = /^mode: (serve|dry-run|validate)$/.exec(line))) mode = m[1] as CompileMode;
    else if (/^(expect|mode)\b/.test(line)) throw new Error(`${name}: malformed directive "${line}"`);
  }
  return { name, file: path.join(dir, 'endpoints.xml'), mode, expected };
}

const specs = readdirSync(DIR, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => readSpec(e.name))
  .sort((a, b) => a.name.localeCompare(b.name));

describe('fixtures/regressions', () => {
  it('holds cases, each with at least one expectation', () => {
    expect(specs.length).toBeGreaterThan(0);
    for (const spec of specs) expect(spec.expected.length, spec.name).toBeGreaterThan(0);
  });

  it.each(specs.map((s) => [s.name, s] as const))('%s: exactly the expected diagnostics, each fully located', (_name, spec) => {
    const result = compileApplication(spec.file, { kinds: TASK_KINDS.list, mode: spec.mode, env: {} });
    expect(result.unreadable).toBeNull();
    const dir = path.dirname(spec.file);
    const found = result.diagnostics.map((d) => `${d.severity} ${d.code} ${path.relative(dir, d.file)}:${d.line}:${d.column}`);
    expect(found).toEqual(spec.expected);
    for (const d of result.diagnostics) {
      expect(Number.isInteger(d.line) && d.line >= 1).toBe(true);
      expect(Number.isInteger(d.column) && d.column >= 1).toBe(true);
    }
  });

  it.each(specs.map((s) => [s.name, s] as const))('%s: the built validate reports it cleanly', async (_name, spec) => {
    assertBuilt();
    const r = await run(['validate', spec.file], { timeout: 20_000 });
    const shown = `exit ${r.exitCode}\n${r.stdout}\n${r.stderr}`;
    expect([0, 1], shown).toContain(r.exitCode);
    expect(r.stdout, shown).not.toMatch(STACK_TRACE);
    expect(r.stderr, shown).not.toMatch(STACK_TRACE);
    expect(r.stdout, shown).not.toContain('undefined');
    expect(r.exitCode).toBe(spec.expected.some((e) => e.startsWith('error ')) ? 1 : 0);
  });
});
