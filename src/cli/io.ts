// What a command reads and writes besides its arguments, handed in rather than taken from
// `process`, as ESLint's cli.execute takes its input: the binary passes the process's own
// streams and environment, and a test passes writers that collect the text, so a command's
// exit code and output are checked in the test's process.

/** Where a command writes text: process.stdout or stderr, or anything with a write method. */
export interface Writer {
  write(text: string): unknown;
  /** A terminal: colours (unless NO_COLOR or --no-color) and, on stderr, the spinner. */
  readonly isTTY?: boolean;
}

export interface CommandIo {
  readonly stdout: Writer;
  /** Diagnostics, warnings and reasons for a failure: never part of a report a program reads. */
  readonly stderr: Writer;
  /** Variables for `${env:…}` and NO_COLOR. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The process's own streams and environment: what the binary passes. */
export function processIo(): CommandIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env };
}
