// docs/diagnostics.md is what users read to script against codes. Checked both ways against the
// table in src/compiler/diagnostic-codes.ts: every code is documented, no code is documented that the
// table lacks (a removed or misspelt one), and the severity column says what each command does.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DIAGNOSTICS, severityOf, type DiagnosticCode } from '../../src/compiler/diagnostic-codes.js';
import type { CompileMode } from '../../src/compiler/index.js';

const doc = readFileSync(fileURLToPath(new URL('../../docs/diagnostics.md', import.meta.url)), 'utf8');
const codes = Object.keys(DIAGNOSTICS) as DiagnosticCode[];
const MODES: readonly CompileMode[] = ['validate', 'serve', 'dry-run'];

/** The rows of the code table: each code of the first cell (one row may list several), and the severity cell. */
const rows = doc
  .split('\n')
  .filter((line) => /^\| `/.test(line))
  .map((line) => {
    const cells = line.split('|').map((c) => c.trim());
    return { codes: [...cells[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!), severity: cells[2]! };
  });
const documented = rows.flatMap((r) => r.codes);

/**
 * What the severity cell must say: the validate severity, then the commands where it differs,
 * such as "warning (error for `serve`)" or "warning (error for `serve`; not reported by `dry-run`)".
 */
function severityCell(code: DiagnosticCode): string {
  const base = severityOf(code, 'validate');
  const differences = MODES.filter((m) => severityOf(code, m) !== base).map((m) => {
    const level = severityOf(code, m);
    return level === 'off' ? `not reported by \`${m}\`` : `${level} for \`${m}\``;
  });
  return differences.length === 0 ? base : `${base} (${differences.join('; ')})`;
}

describe('docs/diagnostics.md', () => {
  it('has a code table to check', () => {
    expect(rows.length).toBeGreaterThan(40);
  });

  it.each(codes)('documents %s, once', (code) => {
    expect(documented.filter((c) => c === code)).toEqual([code]);
  });

  it('documents no code that the table lacks', () => {
    expect(documented.filter((c) => !(c in DIAGNOSTICS))).toEqual([]);
  });

  it.each(codes)('gives the severity of %s for each command', (code) => {
    const row = rows.find((r) => r.codes.includes(code))!;
    expect(row.severity).toBe(severityCell(code));
  });
});
