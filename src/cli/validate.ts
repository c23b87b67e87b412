// `endpoint-service validate [options] <file...>`: the whole report on stdout; exit 0 valid,
// 1 errors (or too many warnings), 2 usage error or an unreadable file (wins over 1).
import { compileApplication, type Diagnostic } from '../compiler/index.js';
import { TASK_KINDS } from '../tasks/registry.js';
import type { ExitCode } from './action.js';
import { useColor } from './color.js';
import { FORMATTERS, type FormatName } from './formatters/index.js';
import { compileProgress } from './progress.js';
import type { CommandIo } from './io.js';

export interface ValidateOptions {
  readonly format: FormatName;
  readonly maxWarnings?: number;
}

export async function validate(files: readonly string[], options: ValidateOptions, io: CommandIo): Promise<ExitCode> {
  // Only the text format is read by people; json and github are read by programs.
  const progress = await compileProgress(io.stderr, options.format === 'text', io.env);
  const diagnostics: Diagnostic[] = [];
  let unreadable = 0;
  let errorCount = 0;
  let warningCount = 0;
  const sourceTexts = new Map<string, string>();
  for (const file of files) {
    const result = compileApplication(file, {
      mode: 'validate',
      kinds: TASK_KINDS.list,
      env: io.env,
      diagnosticsOnly: true,
      keepSourceTexts: options.format === 'text',
      onProgress: progress.update,
    });
    progress.stop();
    if (result.unreadable !== null) {
      // Part of the report in every format, so a JSON reader never sees "valid": true for a
      // file that was not read; the exit code still says 2.
      unreadable += 1;
      diagnostics.push({ file, line: 1, column: 1, severity: 'error', code: 'file-unreadable', message: result.unreadable });
      errorCount += 1;
      continue;
    }
    // A loop, not push(...list): a hostile file can have more diagnostics than a call has room for arguments.
    for (const d of result.diagnostics) diagnostics.push(d);
    for (const [name, text] of result.sourceTexts) sourceTexts.set(name, text);
    errorCount += result.errorCount;
    warningCount += result.warningCount;
  }
  io.stdout.write(FORMATTERS[options.format]({ diagnostics, errorCount, warningCount }, { color: useColor(io.stdout, io.env), sourceTexts }));
  const tooManyWarnings = options.maxWarnings !== undefined && warningCount > options.maxWarnings;
  // On stderr, in every format: the report on stdout keeps its exact shape (the summary
  // stays the last line of text output) and the reason for exit 1 is still said.
  if (tooManyWarnings) {
    io.stderr.write(`endpoint-service: too many warnings: ${warningCount}, at most ${options.maxWarnings} allowed (--max-warnings).\n`);
  }
  return unreadable > 0 ? 2 : errorCount > 0 || tooManyWarnings ? 1 : 0;
}
