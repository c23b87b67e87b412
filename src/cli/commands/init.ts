// `endpoint-service init`'s command line: its argument and help. What it writes is loaded only
// when it runs (docs/architecture.md, "Where other changes go").
import type { Command } from 'commander';
import type { Returning } from '../action.js';

export function registerInit(program: Command, returning: Returning): void {
  program
    .command('init')
    .description('write a minimal working application into an empty or new folder')
    .argument('[dir]', 'the folder to write into: created when missing, refused unless empty', '.')
    .addHelpText(
      'after',
      `
Writes endpoints.xml (one endpoint with required and optional parameters, an HttpRequest task
and an Email task), email-sending-configuration.xml (its server from \${env:SMTP_HOST}) and
schema/*.xsd for editors. A folder that holds anything is left as it is (exit 2).

Examples:
  endpoint-service init demo
  endpoint-service init`,
    )
    .action(
      returning(async (dir: string) => {
        const { init } = await import('../init.js');
        return init(dir);
      }),
    );
}
