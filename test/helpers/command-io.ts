// Runs a command in the test's process: writers that collect what validate or dry-run print,
// and the environment the command sees, in place of the process's own.
import type { CommandIo } from '../../src/cli/io.js';

export interface CollectedIo extends CommandIo {
  readonly out: () => string;
  readonly err: () => string;
}

/** `env` is all the command sees: nothing of the test process's environment leaks in. */
export function collectingIo(env: Record<string, string | undefined> = {}): CollectedIo {
  let out = '';
  let err = '';
  return {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    env,
    out: () => out,
    err: () => err,
  };
}
