// Colors only on a TTY, never with NO_COLOR or --no-color.
import { Chalk, type ChalkInstance } from 'chalk';
import type { Writer } from './io.js';

export function useColor(stream: Writer, env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (process.argv.includes('--no-color')) return false;
  return stream.isTTY === true;
}

export function chalkFor(stream: Writer, env: Readonly<Record<string, string | undefined>> = process.env): ChalkInstance {
  return new Chalk({ level: useColor(stream, env) ? 1 : 0 });
}
