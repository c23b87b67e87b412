// What a compile is asked to do and what it gives back.
import type { Application } from './ast.js';
import type { Diagnostic } from './diagnostics.js';
import type { ElementShape } from './context.js';
import type { TaskKindSyntax } from './task-kind.js';
import type { XmlElement } from './xml-tree.js';

export type { CompileMode } from './mode.js';

import type { CompileMode } from './mode.js';

export interface CompileOptions {
  readonly mode: CompileMode;
  /** The task kinds to compile with: src/tasks/registry.ts's TASK_KINDS.list, or a test's own. */
  readonly kinds: readonly TaskKindSyntax[];
  /** The environment ${env:NAME} reads; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** SMTP connection given outside the application (--smtp-url / ENDPOINT_SERVICE_SMTP_URL). */
  readonly smtpUrlGiven?: boolean;
  /** serve --public-url: ${base-url} is the service's own URL, not the request's Host (no base-url-from-host). */
  readonly publicUrlGiven?: boolean;
  /**
   * Whose tasks this process runs, so that SMTP settings are asked for only where mail can be
   * sent (smtp-not-configured): every endpoint's (the default); only those of endpoints without
   * tasks="background" (a serve that hands background runs to a queue and runs none of its
   * jobs); only background endpoints' (a worker).
   */
  readonly tasksRunHere?: TasksRunHere;
  /**
   * Only the diagnostics are wanted (validate): every endpoint is compiled and checked as for
   * the other commands, then let go, and `application` is null.
   */
  readonly diagnosticsOnly?: boolean;
  /**
   * Hand back the text of each file that has a diagnostic (`CompileResult.sourceTexts`), so the
   * printer shows its lines without reading and decoding it again (and decodes it as the
   * compiler did, in the encoding its declaration names).
   */
  readonly keepSourceTexts?: boolean;
  /** Told what the compile is doing, for a spinner on a terminal; called synchronously, every few hundred endpoints. */
  readonly onProgress?: (progress: CompileProgress) => void;
  /**
   * Called with each element as it is read and the shape it is read with: the attributes and
   * children the compiler knows there, and whether it takes text. The shapes are the language's
   * element table; tests learn it from the compiler itself this way (test/language/) and hold
   * docs/language.md and schema/*.xsd to it.
   */
  readonly onElementRead?: (element: XmlElement, shape: ElementShape) => void;
}

export type TasksRunHere = 'every-endpoint' | 'not-background' | 'background-only';

export type CompileProgress =
  | { readonly phase: 'reading' | 'parsing' }
  /** `endpoints`: compiled so far (valid ones; with errors, fewer than in the file). */
  | { readonly phase: 'compiling' | 'checking'; readonly endpoints: number };

export interface CompileResult {
  /** null when there is any error, the file could not be read, or only diagnostics were asked for. */
  readonly application: Application | null;
  /** Sorted by file, line, column. */
  readonly diagnostics: readonly Diagnostic[];
  readonly errorCount: number;
  readonly warningCount: number;
  /** Set when the endpoints.xml itself could not be read (a usage-level failure, exit 2). */
  readonly unreadable: string | null;
  /** With `keepSourceTexts`: the decoded text of each file a diagnostic names, by the name it gives. Otherwise empty. */
  readonly sourceTexts: ReadonlyMap<string, string>;
}
