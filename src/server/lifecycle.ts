// How a serve or worker process ends, written once for both: on SIGTERM or SIGINT (a second
// SIGINT exits at once), when the cluster primary asks, or after an uncaught exception. Each
// drains what it runs within its deadline, then exits.
//
// An uncaught exception leaves the process in a state Node.js calls undefined: going on would
// serve later requests from it. So the process stops taking work, drains what is running (its
// state is the one the exception left, but each of those requests had begun before it) and exits
// with CRASHED_EXIT_CODE: under --workers N the primary starts a replacement, and with one
// process a supervisor (systemd, a container runtime) restarts it on that non-zero code
// (docs/behaviour.md, "Processes").

import { describeError } from '../errors.js';
import type { Logger } from './log.js';

/** sysexits' EX_SOFTWARE: an internal error, not the configuration (1) or the command line (2). */
export const CRASHED_EXIT_CODE = 70;

export interface Lifecycle {
  /** Logged when the shutdown starts; stops taking work. */
  readonly begin: (why: string) => void;
  /** Everything the process runs, drained. */
  readonly drain: () => Promise<void>;
  /** How long the drain may take before the process exits anyway. */
  readonly deadlineMs: number;
  /** Logged when the drain ended, or its deadline passed. */
  readonly end: (outcome: 'done' | 'timeout') => void;
}

/** Installs the process's handlers; returns the shutdown, for the other reasons to stop (the primary's request). */
export function manageLifecycle(logger: Logger, lifecycle: Lifecycle): (why: string) => void {
  let started = false;
  let exitCode = 0;
  const shutdown = (why: string, code = 0) => {
    if (code !== 0) exitCode = code;
    if (started) {
      if (why === 'SIGINT') forceExit(logger);
      return;
    }
    started = true;
    lifecycle.begin(why);
    const drained = lifecycle.drain().then(
      () => 'done' as const,
      (error: unknown) => {
        logger.log('error', 'stopping failed', { error: describeError(error, { stack: true }) });
        return 'done' as const;
      },
    );
    const deadline = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), lifecycle.deadlineMs).unref());
    void Promise.race([drained, deadline]).then((outcome) => {
      lifecycle.end(outcome);
      process.exit(exitCode);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('unhandledRejection', (error) => logger.log('error', 'unhandled promise rejection', { error: describeError(error, { stack: true }) }));
  process.on('uncaughtException', (error) => {
    logger.log('error', 'uncaught exception: this process stops taking work and exits once what it runs is drained', {
      error: describeError(error, { stack: true }),
      exitCode: CRASHED_EXIT_CODE,
    });
    shutdown('an uncaught exception', CRASHED_EXIT_CODE);
  });
  return (why: string) => shutdown(why);
}

/** A second SIGINT: exit now, whatever still runs. */
export function forceExit(logger: Logger): never {
  logger.log('warn', 'second SIGINT: exiting without waiting for requests and tasks');
  process.exit(130);
}

/** What a version of the application holds until its last task has ended. */
export interface Retirable {
  tasksSettled(): Promise<unknown>;
  close(): Promise<unknown>;
}

/**
 * A version replaced by a --watch reload: closed once its running tasks have ended, and kept in
 * `retired` until then, so a shutdown meanwhile waits for them too.
 */
export function retire<T extends Retirable>(previous: T, retired: Set<T>, logger: Logger): void {
  retired.add(previous);
  void previous
    .tasksSettled()
    .then(() => previous.close())
    .catch((error: unknown) => logger.log('warn', 'closing the previous version failed', { error: describeError(error, { stack: true }) }))
    .finally(() => retired.delete(previous));
}
