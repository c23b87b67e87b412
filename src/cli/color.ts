// Colors only on a TTY, never with NO_COLOR or --no-color.
import { Chalk, type ChalkInstance } from 'chalk';

export function useColor(stream: NodeJS.WriteStream): boolean {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false;
  if (process.argv.includes('--no-color')) return false;
  return stream.isTTY === true;
}

export function chalkFor(stream: NodeJS.WriteStream): ChalkInstance {
  return new Chalk({ level: useColor(stream) ? 1 : 0 });
}
