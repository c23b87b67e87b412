import type { Command } from 'commander';
export function registerValidate(program: Command): void {
  program.command('validate').argument('<file...>').action(() => { process.exitCode = 2; });
}
