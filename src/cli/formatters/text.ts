// `--format text` (the default): each diagnostic as `file:line:col  severity  code  message`
// with its source line and a caret, then a blank line and the summary `N errors, M warnings`.
// serve and dry-run print the same text on stderr for an invalid configuration.

import { Chalk } from 'chalk';
import { QUOTES_SECRET, type Diagnostic } from '../../compiler/index.js';
import { readConfigurationFile } from '../../compiler/read-file.js';
import { useColor } from '../color.js';
import type { DiagnosticsReport, Formatter } from './types.js';

export interface TextOptions {
  readonly color: boolean;
  /** FormatterContext.sourceTexts. */
  readonly sourceTexts?: ReadonlyMap<string, string>;
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
  // (docs/performance.md, "Printing diagnostics"). Lines end as the parser counts them: at LF,
  // CRLF or a lone CR (XML 1.0 section 2.11); the line end is not part of the line.
  const sources = new Map<string, Source | null>();
  const lineOf = (file: string, line: number): string | undefined => {
    let source = sources.get(file);
    if (source === undefined) {
      source = sourceOf(file, options.sourceTexts);
      sources.set(file, source);
    }
    if (source === null || line < 1) return undefined;
    return source.line(line);
  };
  let out = '';
  for (const d of diagnostics) {
    const severity = d.severity === 'error' ? chalk.red('error') : chalk.yellow('warning');
    out += `${chalk.bold(`${d.file}:${d.line}:${d.column}`)}  ${severity}  ${chalk.dim(d.code)}  ${d.message}\n`;
    const line = lineOf(d.file, d.line);
    const source = line !== undefined && QUOTES_SECRET.has(d.code) ? maskAttributeValue(line, d.column) : line;
    if (source !== undefined && source.length <= 500) {
      // Control characters (a binary file) would garble the terminal.
      const expanded = source.replace(/\t/g, '  ').replace(/[\u0000-\u001f\u007f-\u009f\ufffd]/g, '?');
      const prefix = source.slice(0, d.column - 1).replace(/\t/g, '  ');
      out += `  ${expanded}\n  ${' '.repeat(prefix.length)}${chalk.red('^')}\n`;
    }
  }
  return out;
}

/**
 * The line with the value of the attribute at `column` shown as `***`: the value is a secret,
 * and a log that keeps the report must not keep it. A value that goes on past the line end is
 * masked to the end of the line.
 */
export function maskAttributeValue(line: string, column: number): string {
  const at = column - 1;
  const attribute = /^[^\s=]+\s*=\s*(["'])/.exec(line.slice(at));
  if (attribute === null) return line;
  const start = at + attribute[0].length;
  const end = line.indexOf(attribute[1]!, start);
  return line.slice(0, start) + '***' + (end < 0 ? '' : line.slice(end));
}

/** The file's text as the compiler decoded it, else read again; null when it cannot be read. */
function sourceOf(file: string, texts: ReadonlyMap<string, string> | undefined): Source | null {
  const text = texts?.get(file);
  if (text !== undefined) return new Source(text);
  // As the compiler read it: a FIFO or /dev/zero named by an unreadable-file diagnostic must
  // not be read again here, where nothing bounds it.
  const read = readConfigurationFile(file);
  return read.ok ? new Source(read.bytes.toString('utf8')) : null;
}

/** A file's text, read line by line forward (back to the start only when asked for an earlier line). */
class Source {
  private current = 1;
  private start = 0;
  /** The next CR at or after `start`, or -1 when there is none left: most files have none, and are not searched again. */
  private nextCr: number;

  constructor(private readonly text: string) {
    this.nextCr = text.indexOf('\r');
  }

  /** The end of the line starting at `from` (its line end excluded), and where the next line starts. */
  private endOf(from: number): { end: number; next: number } {
    const text = this.text;
    if (this.nextCr !== -1 && this.nextCr < from) this.nextCr = text.indexOf('\r', from);
    const lf = text.indexOf('\n', from);
    const cr = this.nextCr;
    if (cr !== -1 && (lf === -1 || cr < lf)) return { end: cr, next: text.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1 };
    return lf === -1 ? { end: text.length, next: -1 } : { end: lf, next: lf + 1 };
  }

  line(line: number): string | undefined {
    if (line < this.current) {
      this.current = 1;
      this.start = 0;
      this.nextCr = this.text.indexOf('\r');
    }
    while (this.current < line) {
      const { next } = this.endOf(this.start);
      if (next === -1) return undefined;
      this.current++;
      this.start = next;
    }
    return this.text.slice(this.start, this.endOf(this.start).end);
  }
}

/** The diagnostics, a blank line when there are any, and the summary. */
export const formatText: Formatter = (report, context) =>
  formatDiagnosticsText(report.diagnostics, context) + (report.diagnostics.length > 0 ? '\n' : '') + summaryLine(report.errorCount, report.warningCount) + '\n';

/** A serving process's compile on stderr (serve, worker): validate's text format, the diagnostics then the summary line. */
export function compileReport(report: DiagnosticsReport & { readonly sourceTexts: ReadonlyMap<string, string> }): string {
  return formatText(report, { color: useColor(process.stderr), sourceTexts: report.sourceTexts });
}
