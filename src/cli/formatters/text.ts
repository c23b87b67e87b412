// `--format text` (the default): each diagnostic as `file:line:col  severity  code  message`
// with its source line and a caret, then a blank line and the summary `N errors, M warnings`.
// serve and dry-run print the same text on stderr for an invalid configuration.

import { readFileSync } from 'node:fs';
import { Chalk } from 'chalk';
import type { Diagnostic } from '../../compiler/index.js';
import type { Formatter } from './types.js';

export interface TextOptions {
  readonly color: boolean;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function summaryLine(errors: number, warnings: number): string {
  return `${plural(errors, 'error')}, ${plural(warnings, 'warning')}`;
}

/** `file:line:col  severity  code  message`, the source line and a caret; no summary. */
export function formatDiagnosticsText(diagnostics: readonly Diagnostic[], options: TextOptions): string {
  const chalk = new Chalk({ level: options.color ? 1 : 0 });
  // Diagnostics come sorted by file and line, so each file's text is walked forward from line to
  // line instead of being split into an array of all its lines, which costs a large file dearly
  // (docs/performance.md, "Printing diagnostics"). Lines end at LF, a CR before it is not part of
  // the line (as split(/\r?\n/) had it).
  const sources = new Map<string, { text: string; line: number; start: number } | null>();
  const lineOf = (file: string, line: number): string | undefined => {
    let source = sources.get(file);
    if (source === undefined) {
      try {
        source = { text: readFileSync(file, 'utf8'), line: 1, start: 0 };
      } catch {
        source = null;
      }
      sources.set(file, source);
    }
    if (source === null || line < 1) return undefined;
    const text = source.text;
    if (line < source.line) {
      source.line = 1;
      source.start = 0;
    }
    while (source.line < line) {
      const lf = text.indexOf('\n', source.start);
      if (lf < 0) return undefined;
      source.line++;
      source.start = lf + 1;
    }
    const lf = text.indexOf('\n', source.start);
    if (lf < 0) return text.slice(source.start);
    return text.slice(source.start, lf > source.start && text.charCodeAt(lf - 1) === 13 ? lf - 1 : lf);
  };
  let out = '';
  for (const d of diagnostics) {
    const severity = d.severity === 'error' ? chalk.red('error') : chalk.yellow('warning');
    out += `${chalk.bold(`${d.file}:${d.line}:${d.column}`)}  ${severity}  ${chalk.dim(d.code)}  ${d.message}\n`;
    const source = lineOf(d.file, d.line);
    if (source !== undefined && source.length <= 500) {
      // Control characters (a binary file) would garble the terminal.
      const expanded = source.replace(/\t/g, '  ').replace(/[\u0000-\u001f\u007f-\u009f\ufffd]/g, '?');
      const prefix = source.slice(0, d.column - 1).replace(/\t/g, '  ');
      out += `  ${expanded}\n  ${' '.repeat(prefix.length)}${chalk.red('^')}\n`;
    }
  }
  return out;
}

/** The diagnostics, a blank line when there are any, and the summary. */
export const formatText: Formatter = (report, context) =>
  formatDiagnosticsText(report.diagnostics, context) + (report.diagnostics.length > 0 ? '\n' : '') + summaryLine(report.errorCount, report.warningCount) + '\n';
