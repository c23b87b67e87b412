import type { Command } from 'commander';

export function registerDryRun(program: Command): void {
  program
    .command('dry-run')
    .description('print the task plan without any network or SMTP I/O')
    .argument('<file>', 'the endpoints.xml')
    .action(() => {
      process.stderr.write('dry-run: not implemented yet\n');
      process.exitCode = 2;
    });
}
