// `endpoint-service validate`'s command line: its arguments, options and help. The compiler and
// the formatters are loaded only when it runs (docs/architecture.md, "Where other changes go").
import { type Command, Option } from 'commander';
import type { Returning } from '../action.js';
import { FORMAT_NAMES } from '../formatters/names.js';
import { processIo } from '../io.js';
import { warningCount } from '../option-parsers.js';
import type { ValidateOptions } from '../validate.js';

export function registerValidate(program: Command, returning: Returning): void {
  program
    .command('validate')
    .description('check endpoints.xml files and report every problem with its position')
    .argument('<file...>', 'endpoints.xml files')
    .addOption(new Option('--format <format>', 'output format').choices(FORMAT_NAMES).default('text'))
    .option('--max-warnings <n>', 'exit 1 when there are more than n warnings', warningCount)
    .action(
      returning(async (files: string[], options: ValidateOptions) => {
        const { validate } = await import('../validate.js');
        return validate(files, options, processIo());
      }),
    );
}
