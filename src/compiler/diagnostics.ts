// Collects the diagnostics of one command: the one way a problem is raised, with its severity
// and message from the table (diagnostic-codes.ts), a code marked oncePerFile grouped by file.

import type { Position } from '../position.js';
import type { CompileMode } from './mode.js';
import { DIAGNOSTICS, messageOf, severityOf, type Args, type DiagnosticCode, type Severity } from './diagnostic-codes.js';

/** A problem of the configuration: data, raised through one helper. */
export interface Diagnostic {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly severity: Severity;
  readonly code: string;
  readonly message: string;
  /**
   * For a code reported once per file (env-not-set): where else in the same file the same problem
   * occurs, in document order. Absent when there is no other place.
   */
  readonly otherPositions?: readonly { readonly line: number; readonly column: number }[];
}

/**
 * A code marked oncePerFile is reported once per file and arguments (an unset variable once per
 * file, however often it is used), at the first place in the file; the message counts the other
 * places and the diagnostic lists them (otherPositions, in validate's JSON).
 */
interface Group {
  /** Index of the group's diagnostic in the list. */
  readonly index: number;
  readonly code: DiagnosticCode;
  readonly args: readonly unknown[];
  /** The earliest position so far: the one the diagnostic stands at. */
  first: Position;
  readonly others: Position[];
}

const MAX_LINES_NAMED = 5;

/**
 * `It is used 3 more times in this file: lines 27, 35 and 41.`, or `…, first on lines 27, 35, 41,
 * 50 and 61.` past five lines (`others` in document order).
 */
function otherPlaces(others: readonly Position[]): string {
  const lines: number[] = [];
  for (const p of others) {
    if (lines[lines.length - 1] !== p.line) lines.push(p.line);
    if (lines.length > MAX_LINES_NAMED) break;
  }
  const more = lines.length > MAX_LINES_NAMED;
  const named = lines.slice(0, MAX_LINES_NAMED);
  const list = named.length === 1 ? `line ${named[0]}` : `lines ${named.slice(0, -1).join(', ')} and ${named[named.length - 1]}`;
  return ` It is used ${others.length} more time${others.length === 1 ? '' : 's'} in this file${more ? ', first on' : ':'} ${list}.`;
}

const before = (a: Position, b: Position) => a.line < b.line || (a.line === b.line && a.column < b.column);

/** Collects diagnostics for one command; the one way a problem is raised. */
export class Diagnostics {
  readonly #list: Diagnostic[] = [];
  // Counted as reported: compileEndpoint reads errorCount twice per endpoint, and filtering the
  // list each time made an application with many warnings quadratic in its size.
  #errors = 0;
  readonly #groups = new Map<string, Group>();
  /** Groups with a place added since their diagnostic was last written. */
  readonly #changed = new Set<Group>();

  constructor(readonly mode: CompileMode) {}

  report<C extends DiagnosticCode>(code: C, at: Position, ...args: Args<C>): void {
    const severity = severityOf(code, this.mode);
    if (severity === 'off') return;
    let key: string | undefined;
    if ('oncePerFile' in DIAGNOSTICS[code]) {
      key = `${code}\u0000${at.file}\u0000${args.join('\u0000')}`;
      const group = this.#groups.get(key);
      if (group !== undefined) {
        // Compile order is not document order (an endpoint's tasks before its responses).
        if (before(at, group.first)) {
          group.others.push(group.first);
          group.first = at;
        } else group.others.push(at);
        this.#changed.add(group);
        return;
      }
    }
    const message = (messageOf(code, this.mode) as (...a: Args<C>) => string)(...args);
    if (key !== undefined) this.#groups.set(key, { index: this.#list.length, code, args, first: at, others: [] });
    this.#list.push({ file: at.file, line: at.line, column: at.column, severity, code, message });
    if (severity === 'error') this.#errors++;
  }

  /** Every diagnostic reported, in the order reported. */
  get list(): readonly Diagnostic[] {
    for (const group of this.#changed) {
      const reported = this.#list[group.index]!;
      const others = [...group.others].sort((a, b) => a.line - b.line || a.column - b.column);
      const message = (messageOf(group.code, this.mode) as (...a: readonly unknown[]) => string)(...group.args) + otherPlaces(others);
      this.#list[group.index] = {
        ...reported,
        line: group.first.line,
        column: group.first.column,
        message,
        otherPositions: others.map((p) => ({ line: p.line, column: p.column })),
      };
    }
    this.#changed.clear();
    return this.#list;
  }

  get errorCount(): number {
    return this.#errors;
  }
}
