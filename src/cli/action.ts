// How a command hands back its result, as ESLint's execute(): each action returns its exit code
// and main.ts alone sets process.exitCode. Exit codes (README.md): 0 success, 1 the configuration
// (or a simulated request) has errors, 2 a usage error or an unreadable file; for `deliveries`,
// 3 nothing to act on (no such delivery, or its request was not kept) and 4 the store cannot be
// reached (or no running serve took a replay).

export type ExitCode = 0 | 1 | 2 | 3 | 4;

/** A command's action: commander's arguments in, the exit code out. */
export type Action<A extends unknown[]> = (...args: A) => ExitCode | Promise<ExitCode>;

/** Makes a commander action handler of an Action, passing its exit code to main.ts. */
export type Returning = <A extends unknown[]>(action: Action<A>) => (...args: A) => Promise<void>;
