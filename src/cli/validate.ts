// `endpoint-service validate [options] <file...>`: the whole report on stdout; exit 0 valid,
// 1 errors (or too many warnings), 2 usage error or an unreadable file (wins over 1).
import { Command, InvalidArgumentError, Option } from 'commander';
import { compileApplication, type Diagnostic } from '../compiler/index.js';
import { TASK_KINDS } from '../tasks/registry.js';
import { useColor } from './color.js';
import { formatDiagnosticsText, formatGithub, formatJson, summaryLine } from './format-diagnostics.js';

type Format = 'text' | 'json' | 'github';

function parseCount(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number of warnings (0 or more).');
  return Number(value);
}

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('check endpoints.xml files and report every problem with its position')
    .argument('<file...>', 'endpoints.xml files')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json', 'github']).default('text'))
    .option('--max-warnings <n>', 'exit 1 when there are more than n warnings', parseCount)
    .action((files: string[], options: { format: Format; maxWarnings?: number }) => {
      const diagnostics: Diagnostic[] = [];
      const unreadable: string[] = [];
      let errors = 0;
      let warnings = 0;
      for (const file of files) {
        const result = compileApplication(file, { mode: 'validate', kinds: TASK_KINDS.list, diagnosticsOnly: true });
        if (result.unreadable !== null) {
          // Part of the report in every format, so a JSON reader never sees "valid": true for a
          // file that was not read; the exit code still says 2.
          unreadable.push(result.unreadable);
          diagnostics.push({ file, line: 1, column: 1, severity: 'error', code: 'file-unreadable', message: result.unreadable });
          errors += 1;
          continue;
        }
        // A loop, not push(...list): a hostile file can have more diagnostics than a call has room for arguments.
        for (const d of result.diagnostics) diagnostics.push(d);
        errors += result.errorCount;
        warnings += result.warningCount;
      }
      let out: string;
      if (options.format === 'json') out = formatJson(diagnostics, errors, warnings);
      else if (options.format === 'github') out = formatGithub(diagnostics);
      else {
        out = formatDiagnosticsText(diagnostics, { color: useColor(process.stdout) });
        out += (diagnostics.length > 0 ? '\n' : '') + summaryLine(errors, warnings) + '\n';
      }
      process.stdout.write(out);
      const tooManyWarnings = options.maxWarnings !== undefined && warnings > options.maxWarnings;
      // On stderr, in every format: the report on stdout keeps its exact shape (the summary
      // stays the last line of text output) and the reason for exit 1 is still said.
      if (tooManyWarnings) {
        process.stderr.write(`endpoint-service: too many warnings: ${warnings}, at most ${options.maxWarnings} allowed (--max-warnings).\n`);
      }
      process.exitCode = unreadable.length > 0 ? 2 : errors > 0 || tooManyWarnings ? 1 : 0;
    });
}
