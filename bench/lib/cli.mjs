// The command line of every bench script. `--help` (or `-h`) prints the script's usage on
// stdout and exits 0; an unknown option, an option without its value, a missing required
// option or a malformed number prints the problem and the usage on stderr and exits 2. Both
// happen before anything starts: a run takes minutes and holds the machine's cores, so a
// mistyped option must not start one with the defaults.
import path from 'node:path';
import { parseArgs } from 'node:util';

/**
 * Parses process.argv with node:util's parseArgs (strict) after handling --help.
 *   usage        the text for --help, beginning with "Usage: "
 *   options      parseArgs options (without help)
 *   positionals  whether arguments that are not options are allowed
 *   required     names of options that must be given
 * Returns parseArgs' { values, positionals }.
 */
export function commandLine(usage, options = {}, { positionals = false, required = [] } = {}) {
  const args = process.argv.slice(2);
  const end = args.indexOf('--');
  const own = end < 0 ? args : args.slice(0, end);
  if (own.includes('--help') || own.includes('-h')) {
    process.stdout.write(`${usage.trimEnd()}\n`);
    process.exit(0);
  }
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: positionals, strict: true });
  } catch (error) {
    // parseArgs' first sentence says what is wrong; the rest is advice about `--`.
    usageError(usage, String(error.message).split('. ')[0]);
  }
  for (const name of required) if (parsed.values[name] === undefined) usageError(usage, `--${name} is required`);
  return parsed;
}

/** Prints `message` and the usage on stderr and exits 2. */
export function usageError(usage, message) {
  process.stderr.write(`${path.basename(process.argv[1] ?? 'bench')}: ${message}\n\n${usage.trimEnd()}\n`);
  process.exit(2);
}

/** The number an option's text holds (`fallback` when the option was not given); a usage error unless it is a number >= 0. */
export function numberOption(usage, values, name, fallback) {
  const text = values[name];
  if (text === undefined) return fallback;
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) usageError(usage, `--${name} must be a number (got "${text}")`);
  return n;
}
