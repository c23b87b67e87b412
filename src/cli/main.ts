// The commander program. Exit codes (README.md): 0 ok, 1 configuration errors, 2 usage error or
// unreadable file; commander's own usage errors exit 2 too.
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import type { Returning } from './action.js';
// Each command's action, and all it needs, is loaded only when that command runs: `--version`,
// `--help` and a usage error load the command lines alone (docs/architecture.md, "Where other
// changes go").
import { registerValidate } from './commands/validate.js';
import { registerServe } from './commands/serve.js';
import { registerDryRun } from './commands/dry-run.js';
import { registerInit } from './commands/init.js';
import { registerWorker } from './commands/worker.js';
import { registerJobs } from './commands/jobs.js';
import { registerDeliveries } from './commands/deliveries.js';

// A reader that stops early (`validate big.xml | head`) closes the pipe: that ends the command
// quietly with its exit code so far, rather than with an unhandled EPIPE and a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command();
program
  .name('endpoint-service')
  .description('Turn a declarative endpoints.xml into a running HTTP service')
  .version(pkg.version, '-V, --version')
  .option('--no-color', 'disable colors (NO_COLOR is respected too)')
  .showSuggestionAfterError(true)
  .configureOutput({ outputError: (text, write) => write(withoutExcessArguments(text)) })
  .exitOverride();

// Each command's action returns its exit code; this file is the one place that sets
// process.exitCode. (A serving process that later shuts down ends itself, in src/server/.)
const returning: Returning =
  (action) =>
  async (...args) => {
    process.exitCode = await action(...args);
  };

registerValidate(program, returning);
registerServe(program, returning);
registerDryRun(program, returning);
registerInit(program, returning);
registerWorker(program, returning);
registerJobs(program, returning);
registerDeliveries(program, returning);
for (const command of program.commands) command.exitOverride();

/**
 * commander 15 lists the excess arguments after its "too many arguments" message ("... but got 3:
 * a, b, c."); the message stays as it was, ending at the count. Set before the commands are added,
 * so that each of them inherits it.
 */
function withoutExcessArguments(text: string): string {
  return text.replace(/^(error: too many arguments.*?\. Expected \d+ arguments? but got \d+): .*\.\n$/s, '$1.\n');
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end with exitCode 0; everything else commander raises is a usage error.
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    process.stderr.write(`endpoint-service: internal error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  }
}
