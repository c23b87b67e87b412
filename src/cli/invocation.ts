// How the person who ran a command can run this program again from the same folder, for the
// commands init prints. The bare name works only where it is on PATH (installed globally, or
// `npm link`ed); in a clone or a project that has it as a dependency, it does not.
import { accessSync, constants, realpathSync } from 'node:fs';
import path from 'node:path';

export interface Invocation {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** process.argv[1]: the script node was given. */
  readonly script: string;
  readonly cwd: string;
}

/**
 * `npx endpoint-service` under npm (npx, `npm exec`, an npm script: npm puts the package's bin
 * on PATH only for its child, so the bare name would fail in the person's shell); the bare name
 * when the `endpoint-service` on PATH is this very program; else the script's path (relative
 * when it is below the current folder), with `node` before it unless it can be executed.
 */
export function commandAsInvoked({ env, script, cwd }: Invocation): string {
  if (env.npm_command !== undefined && env.npm_command !== '') return 'npx endpoint-service';
  const self = realpath(script);
  if (self !== null && onPath('endpoint-service', env.PATH ?? '', cwd).some((found) => realpath(found) === self)) return 'endpoint-service';
  const relative = path.relative(cwd, script);
  const shown = relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? `./${relative}` : script;
  return executable(script) ? shellWord(shown) : `node ${shellWord(shown)}`;
}

function onPath(name: string, searchPath: string, cwd: string): string[] {
  return searchPath
    .split(path.delimiter)
    .filter((dir) => dir !== '')
    .map((dir) => path.resolve(cwd, dir, name))
    .filter(executable);
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function realpath(file: string): string | null {
  try {
    return realpathSync(file);
  } catch {
    return null;
  }
}

/** A word for a POSIX shell: quoted when it holds anything but plain characters. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
