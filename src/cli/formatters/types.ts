// One signature for every diagnostics formatter, as ESLint's: the whole report in, the text to
// print out. A formatter prints; it decides nothing (exit codes belong to the command).
import type { Diagnostic } from '../../compiler/index.js';

export interface DiagnosticsReport {
  /** Sorted by file, line and column within each endpoints.xml, files in the order given. */
  readonly diagnostics: readonly Diagnostic[];
  readonly errorCount: number;
  readonly warningCount: number;
}

export interface FormatterContext {
  /** ANSI colors (a TTY without NO_COLOR / --no-color). */
  readonly color: boolean;
  /** The text of files as the compiler decoded them (CompileResult.sourceTexts); a file not here is read again. */
  readonly sourceTexts?: ReadonlyMap<string, string>;
}

export type Formatter = (report: DiagnosticsReport, context: FormatterContext) => string;
