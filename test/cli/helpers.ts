// Runs the built command line as a user would: `node bin/endpoint-service.js ...`, never the
// TypeScript sources, so these tests see exactly what the published package does.
import { execa } from 'execa';
import { existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const bin = path.join(repoRoot, 'bin/endpoint-service.js');
export const contactForm = 'fixtures/contact-form/endpoints.xml';

/** A failure rather than a confusing "not built" exit 2 in every test. */
export function assertBuilt(): void {
  if (!existsSync(path.join(repoRoot, 'dist/cli/main.js'))) {
    throw new Error('dist/cli/main.js is missing: build first with `npx tsc -p tsconfig.json`.');
  }
}

export interface RunOptions {
  readonly cwd?: string;
  /** Variables to set (a value of undefined removes one). */
  readonly env?: Record<string, string | undefined>;
  /** A hang guard only: generous, never a speed assertion. */
  readonly timeout?: number;
}

/**
 * The child's environment is built from scratch: the contact form warns about CRM_API_KEY only
 * when it is unset, and NO_COLOR/FORCE_COLOR from the developer's shell must not change output.
 */
export function childEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !['CRM_API_KEY', 'NO_COLOR', 'FORCE_COLOR'].includes(key)) env[key] = value;
  }
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

export async function run(args: readonly string[], options: RunOptions = {}) {
  return await execa('node', [bin, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: childEnv(options.env),
    extendEnv: false,
    reject: false,
    stripFinalNewline: false,
    timeout: options.timeout ?? 20_000,
  });
}

/** A fresh temporary directory with the given files (paths relative to it). */
export function tempApp(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'es-cli-'));
  for (const [name, content] of Object.entries(files)) {
    const target = path.join(dir, name);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
  return dir;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** 1-based line and column of the first occurrence of `needle` in `text`. */
export function positionOf(text: string, needle: string, from = 0): { line: number; column: number } {
  const index = text.indexOf(needle, from);
  if (index < 0) throw new Error(`"${needle}" not found in the fixture text`);
  const before = text.slice(0, index);
  const line = before.split('\n').length;
  return { line, column: index - (before.lastIndexOf('\n') + 1) + 1 };
}

/** A stack trace or an uncaught exception's header, wherever it was printed. */
export const STACK_TRACE = /^\s+at .+[(:]\d+|\b(?:[A-Z][A-Za-z]*)?Error: |internal error/m;

export const ANSI = /\u001b\[/;
