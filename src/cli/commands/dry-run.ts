// `endpoint-service dry-run`'s command line: its argument, options and help. The compiler and the
// plan simulator are loaded only when it runs (docs/architecture.md, "Where other changes go").
import { type Command, Option } from 'commander';
import type { Returning } from '../action.js';
import type { DryRunOptions } from '../dry-run.js';
import { processIo } from '../io.js';
import { collectHeader, nameValue, repeated } from '../option-parsers.js';
import { PLAN_FORMATS } from '../plan/format-names.js';

export function registerDryRun(program: Command, returning: Returning): void {
  program
    .command('dry-run')
    .description('print the task plan without any network or SMTP I/O')
    .argument('<file>', 'the endpoints.xml')
    .addOption(new Option('--endpoint <name>', 'only this endpoint (repeatable)').argParser(repeated).default([] as string[], 'every endpoint'))
    .option('--param <name=value>', 'simulate a request with this parameter (repeatable; several values for one name are joined with the separator)', nameValue)
    .option('--body <file>', 'simulate a request with this body (a webhook delivery saved to a file)')
    .option('--content-type <type>', "the --body file's content type (default: application/json for .json, application/xml for .xml)")
    .option('--header <"Name: value">', 'simulate a request with this header (repeatable)', collectHeader)
    .addOption(new Option('--format <format>', 'output format').choices(PLAN_FORMATS).default('text'))
    .addHelpText(
      'after',
      `
A simulated request uses request-id "dry-run", client-ip 127.0.0.1, user-agent
"endpoint-service dry-run" and base-url http://127.0.0.1:8080. Secrets print as ***,
intermediate values as <from TASK-ID>. Nothing is sent.

Examples:
  endpoint-service dry-run endpoints.xml
  endpoint-service dry-run --endpoint signup --param email=ann@example.com endpoints.xml
  endpoint-service dry-run --endpoint github --body issues.json --header "X-GitHub-Event: issues" endpoints.xml
  endpoint-service dry-run --format mermaid endpoints.xml`,
    )
    .action(
      returning(async (file: string, options: DryRunOptions) => {
        const { dryRun } = await import('../dry-run.js');
        return dryRun(file, options, processIo());
      }),
    );
}
