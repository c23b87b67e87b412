import type { Command } from 'commander';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve the application over HTTP')
    .argument('<file>', 'the endpoints.xml')
    .action(() => {
      process.stderr.write('serve: not implemented yet\n');
      process.exitCode = 2;
    });
}
