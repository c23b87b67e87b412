// What a compile is asked to do and what it gives back.
import type { Application } from './ast.js';
import type { Diagnostic } from './diagnostic.js';

/** Which command reads the application: a few checks are errors for serve only. */
export type CompileMode = 'validate' | 'serve' | 'dry-run';

export interface CompileOptions {
  readonly mode: CompileMode;
  /** The environment ${env:NAME} reads; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** SMTP connection given outside the application (--smtp-url / ENDPOINT_SERVICE_SMTP_URL). */
  readonly smtpUrlGiven?: boolean;
  /**
   * Only the diagnostics are wanted (validate): every endpoint is compiled and checked as for
   * the other commands, then let go, and `application` is null.
   */
  readonly diagnosticsOnly?: boolean;
}

export interface CompileResult {
  /** null when there is any error, the file could not be read, or only diagnostics were asked for. */
  readonly application: Application | null;
  /** Sorted by file, line, column. */
  readonly diagnostics: readonly Diagnostic[];
  readonly errorCount: number;
  readonly warningCount: number;
  /** Set when the endpoints.xml itself could not be read (a usage-level failure, exit 2). */
  readonly unreadable: string | null;
}
