// Every diagnostic code has at least one small invalid application in fixtures/invalid/<code>[--variant]/
// whose leading comment lists exactly the diagnostics it must produce:
//
//   expect: SEVERITY CODE [FILE:]LINE:COLUMN     one line per diagnostic; FILE defaults to endpoints.xml
//   expect-message-contains: TEXT                  for the expect line just above (did-you-mean names, cycles)
//   mode: serve|dry-run                            default validate
//   env: NAME=VALUE                                the environment ${env:...} sees; default empty
//   smtp-url-given                                 as with --smtp-url
//
// The list must equal the compiler's output exactly, so a missing diagnostic, an extra one
// (a follow-on problem, a duplicate report) or a wrong position all fail.
// A fixture whose endpoints.xml must be blank (file-empty) keeps its directives in expect.txt.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileApplication, type CompileMode } from '../../src/compiler/index.js';
import { TASK_KINDS } from '../../src/tasks/registry.js';
import { DIAGNOSTICS, severityOf, type DiagnosticCode } from '../../src/compiler/diagnostic-codes.js';

const INVALID = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/invalid');

/** Codes that cannot be provoked by a fixture folder: an unreadable file is a usage error (exit 2), tested with the CLI. */
const NOT_FIXTURED = new Set(['file-unreadable']);

interface Expected {
  severity: string;
  code: string;
  file: string;
  line: number;
  column: number;
  messageContains: string[];
}

interface FixtureSpec {
  name: string;
  /** The code the folder is named after (before `--`). */
  code: string;
  dir: string;
  mode: CompileMode;
  env: Record<string, string>;
  smtpUrlGiven: boolean;
  expected: Expected[];
}

function leadingComments(text: string): string {
  // Only comments before the first element (or DOCTYPE) declare expectations: a comment
  // further down is part of the case, not of its contract.
  // An XML declaration, when the case needs one, must come first, before the comment.
  let rest = text.replace(/^<\?xml[^>]*\?>/, '');
  let out = '';
  for (;;) {
    const m = /^\s*<!--([\s\S]*?)-->/.exec(rest);
    if (!m) return out;
    out += m[1] + '\n';
    rest = rest.slice(m[0].length);
  }
}

function readSpec(name: string): FixtureSpec {
  const dir = path.join(INVALID, name);
  const main = path.join(dir, 'endpoints.xml');
  const sidecar = path.join(dir, 'expect.txt');
  const source = existsSync(sidecar) ? readFileSync(sidecar, 'utf8') : leadingComments(readFileSync(main, 'utf8'));
  const spec: FixtureSpec = { name, code: name.split('--')[0]!, dir, mode: 'validate', env: {}, smtpUrlGiven: false, expected: [] };
  for (const raw of source.split('\n')) {
    const line = raw.trim();
    let m: RegExpExecArray | null;
    if ((m = /^expect: (error|warning) ([a-z-]+) (?:(.+):)?(\d+):(\d+)$/.exec(line))) {
      spec.expected.push({
        severity: m[1]!,
        code: m[2]!,
        file: path.join(dir, m[3] ?? 'endpoints.xml'),
        line: Number(m[4]),
        column: Number(m[5]),
        messageContains: [],
      });
    } else if ((m = /^expect-message-contains: (.+)$/.exec(line))) {
      const last = spec.expected[spec.expected.length - 1];
      if (!last) throw new Error(`${name}: expect-message-contains before any expect line`);
      last.messageContains.push(m[1]!);
    } else if ((m = /^mode: (serve|dry-run|validate)$/.exec(line))) spec.mode = m[1] as CompileMode;
    else if ((m = /^env: ([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line))) spec.env[m[1]!] = m[2]!;
    else if (line === 'smtp-url-given') spec.smtpUrlGiven = true;
    else if (/^(expect|mode|env)\b/.test(line)) throw new Error(`${name}: malformed directive "${line}"`);
  }
  return spec;
}

const names = readdirSync(INVALID, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const specs = names.map(readSpec);

const key = (d: { severity: string; code: string; file: string; line: number; column: number }) =>
  `${d.severity} ${d.code} ${path.relative(INVALID, d.file)}:${d.line}:${d.column}`;

describe('fixtures/invalid: each case yields exactly its declared diagnostics', () => {
  it('has fixtures to run', () => {
    expect(specs.length).toBeGreaterThan(50);
  });

  for (const spec of specs) {
    it(spec.name, () => {
      // A fixture must say what it expects: one that expects nothing could never fail.
      expect(spec.expected.length, `${spec.name} declares no expect line`).toBeGreaterThan(0);
      // The folder is named after a code it actually exercises.
      expect(spec.expected.map((e) => e.code)).toContain(spec.code);

      const file = path.join(spec.dir, 'endpoints.xml');
      const result = compileApplication(file, { kinds: TASK_KINDS.list, mode: spec.mode, env: spec.env, smtpUrlGiven: spec.smtpUrlGiven });
      expect(result.unreadable).toBeNull();

      // The result is sorted: endpoints.xml first, then other files, each by line and column.
      const rank = (d: { file: string; line: number; column: number }) => [d.file === file ? 0 : 1, d.file, d.line, d.column] as const;
      for (let i = 1; i < result.diagnostics.length; i++) {
        const [a, b] = [rank(result.diagnostics[i - 1]!), rank(result.diagnostics[i]!)];
        const order = a[0] - b[0] || a[1].localeCompare(b[1]) || a[2] - b[2] || a[3] - b[3];
        expect(order, `diagnostics out of order at ${i}`).toBeLessThanOrEqual(0);
      }

      const actual = result.diagnostics.map(key).sort();
      const wanted = spec.expected.map(key).sort();
      expect(actual).toEqual(wanted);

      for (const e of spec.expected) {
        if (e.messageContains.length === 0) continue;
        // Several diagnostics may share code and position; one of them must carry the text.
        const candidates = result.diagnostics.filter((d) => key(d) === key(e)).map((d) => d.message);
        for (const text of e.messageContains)
          expect(
            candidates.some((m) => m.includes(text)),
            `${key(e)}: ${JSON.stringify(candidates)} should contain ${JSON.stringify(text)}`,
          ).toBe(true);
      }

      // Counts and the application follow from the list: no application when there is an error.
      const errors = result.diagnostics.filter((d) => d.severity === 'error').length;
      expect(result.errorCount).toBe(errors);
      expect(result.warningCount).toBe(result.diagnostics.length - errors);
      if (errors > 0) expect(result.application).toBeNull();
      else expect(result.application).not.toBeNull();
      // validate asks for diagnostics only and lets the AST go: the same list, message for message.
      const only = compileApplication(file, { kinds: TASK_KINDS.list, mode: spec.mode, env: spec.env, smtpUrlGiven: spec.smtpUrlGiven, diagnosticsOnly: true });
      expect(only.diagnostics).toEqual(result.diagnostics);
      expect(only.application).toBeNull();
      // Every message is a sentence a user can act on: never empty, never "undefined".
      for (const d of result.diagnostics) {
        expect(d.message.length).toBeGreaterThan(10);
        expect(d.message).not.toMatch(/undefined|\[object Object\]/);
      }
    });
  }
});

describe('fixtures/invalid: coverage of the diagnostics table', () => {
  it('has at least one fixture for every diagnostic code', () => {
    const covered = new Set(specs.map((s) => s.code));
    const missing = Object.keys(DIAGNOSTICS).filter((code) => !NOT_FIXTURED.has(code) && !covered.has(code));
    expect(missing).toEqual([]);
  });

  it('has a fixture for every command in which a code weighs differently (severity is per command)', () => {
    const missing: string[] = [];
    for (const code of Object.keys(DIAGNOSTICS) as DiagnosticCode[]) {
      if (typeof DIAGNOSTICS[code].severity === 'string') continue;
      for (const mode of ['validate', 'serve', 'dry-run'] as const) {
        const severity = severityOf(code, mode);
        if (severity === 'off') continue;
        const exercised = specs.some((s) => s.mode === mode && s.expected.some((e) => e.code === code && e.severity === severity));
        if (!exercised) missing.push(`${code} (${severity} in ${mode})`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('names every fixture folder after a code of the table', () => {
    const unknown = specs.filter((s) => !(s.code in DIAGNOSTICS)).map((s) => s.name);
    expect(unknown).toEqual([]);
  });
});
