// The compile of a serving process (serve, worker), at start and on each --watch reload, as one
// value: an application to serve, a file with errors, or a file that cannot be read. The
// commands decide what to print and which exit code a failed start has; the three cases are
// told apart here once, not by comparing an application with null and a string.

import { compileApplication, type Application, type CompileOptions, type Diagnostic } from '../compiler/index.js';

export type ServingCompile =
  | {
      readonly kind: 'compiled';
      readonly application: Application;
      readonly diagnostics: readonly Diagnostic[];
      readonly warningCount: number;
      readonly sourceTexts: ReadonlyMap<string, string>;
    }
  | {
      readonly kind: 'invalid';
      readonly diagnostics: readonly Diagnostic[];
      readonly errorCount: number;
      readonly warningCount: number;
      readonly sourceTexts: ReadonlyMap<string, string>;
    }
  | { readonly kind: 'unreadable'; readonly reason: string }
  /** A --watch reload that threw (a compiler bug): the running version stays. */
  | { readonly kind: 'failed'; readonly reason: string };

export function compileToServe(file: string, options: CompileOptions): ServingCompile {
  // The texts come back only with diagnostics, for their printed lines; nothing keeps them after.
  const result = compileApplication(file, { ...options, keepSourceTexts: true });
  if (result.unreadable !== null) return { kind: 'unreadable', reason: result.unreadable };
  if (result.application === null || result.errorCount > 0) {
    const { diagnostics, errorCount, warningCount, sourceTexts } = result;
    return { kind: 'invalid', diagnostics, errorCount, warningCount, sourceTexts };
  }
  const { application, diagnostics, warningCount, sourceTexts } = result;
  return { kind: 'compiled', application, diagnostics, warningCount, sourceTexts };
}

/** The exit code of a start without an application: 1 for a file with errors, 2 for one that cannot be read (or a compile that threw). */
export function failedStartCode(outcome: Exclude<ServingCompile, { kind: 'compiled' }>): 1 | 2 {
  return outcome.kind === 'invalid' ? 1 : 2;
}
