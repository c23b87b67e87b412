// A spinner on the terminal for a compile that takes a while (a large validate, serve's start):
// silence for seconds reads as a hang. It appears only after half a second, only on a terminal,
// only on stderr, and never where a program reads the output (--format json|github), so
// scripts see exactly what they saw before.

import { WriteStream } from 'node:tty';
import type { Ora } from 'ora';
import type { CompileProgress } from '../compiler/index.js';
import type { Writer } from './io.js';

const SHOW_AFTER_MS = 500;

export interface ProgressReporter {
  update(progress: CompileProgress): void;
  /** Clears the spinner's line; the next output starts on a clean line. */
  stop(): void;
}

const SILENT: ProgressReporter = { update() {}, stop() {} };

/**
 * `ora` is loaded only on a terminal (the compile is synchronous, so it cannot be loaded once
 * the spinner is due). Every update draws a frame at once rather than waiting for a timer that
 * cannot fire until the compile is over.
 */
export async function compileProgress(
  stream: Writer,
  wanted: boolean,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<ProgressReporter> {
  // A terminal that reports no width (some CI ptys) would make every frame clear the screen.
  if (!wanted || !(stream instanceof WriteStream) || stream.isTTY !== true || !(stream.columns > 0) || env['CI'] !== undefined || env['TERM'] === 'dumb') {
    return SILENT;
  }
  const { default: ora } = await import('ora');
  const started = Date.now();
  let spinner: Ora | null = null;
  return {
    update(progress) {
      if (spinner === null) {
        if (Date.now() - started < SHOW_AFTER_MS) return;
        spinner = ora({ stream, text: describe(progress), discardStdin: false, hideCursor: false }).start();
        return;
      }
      spinner.text = describe(progress);
      spinner.render();
    },
    stop() {
      spinner?.stop();
      spinner = null;
    },
  };
}

function describe(progress: CompileProgress): string {
  switch (progress.phase) {
    case 'reading':
      return 'reading';
    case 'parsing':
      return 'parsing the XML';
    case 'compiling':
      return `compiling: ${progress.endpoints.toLocaleString('en-US')} endpoints`;
    case 'checking':
      return `checking ${progress.endpoints.toLocaleString('en-US')} endpoints`;
  }
}
