// Starts the real binary (`endpoint-service serve ... --port 0`), waits for its ready line on
// stdout and stops it again. Tests talk to it over loopback HTTP only.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/endpoint-service.js', import.meta.url));
const READY = /^endpoint-service listening on (http:\/\/\S+)$/;

export function fixture(name: string): string {
  return fileURLToPath(new URL(`../../fixtures/serve/${name}/endpoints.xml`, import.meta.url));
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface RunningService {
  /** e.g. http://127.0.0.1:41234 */
  readonly url: string;
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Every stderr line that parses as JSON (the structured log). */
  readonly logs: () => Record<string, unknown>[];
  /** Resolves once stderr holds a line for which `match` is true. */
  readonly waitForLog: (match: (line: Record<string, unknown>) => boolean) => Promise<Record<string, unknown>>;
  readonly waitForStderr: (text: string) => Promise<void>;
  readonly exited: Promise<Exit>;
  /** SIGTERM (or `signal`) and wait for the exit. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<Exit>;
}

function ensureBuilt(): void {
  if (!existsSync(fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url)))) {
    throw new Error('dist/ is missing: run `npx tsc -p tsconfig.json` before these tests');
  }
}

function launch(file: string, args: readonly string[], env: Record<string, string | undefined>): ChildProcess {
  ensureBuilt();
  return spawn(process.execPath, [BIN, 'serve', file, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', PORT: undefined, ENDPOINT_SERVICE_SMTP_URL: undefined, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Starts `serve FILE --port 0 ARGS` (`--port 0` unless ARGS or env set a port, `--workers 1` unless ARGS set --workers). */
export async function startServe(file: string, args: readonly string[] = [], env: Record<string, string | undefined> = {}): Promise<RunningService> {
  const fullArgs = [
    ...(args.includes('--port') || env.PORT !== undefined ? [] : ['--port', '0']),
    ...(args.includes('--workers') ? [] : ['--workers', '1']),
    ...(args.includes('--log-format') ? [] : ['--log-format', 'json']),
    ...args,
  ];
  const child = launch(file, fullArgs, env);
  let out = '';
  let err = '';
  const stderrListeners = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
    for (const listener of stderrListeners) listener();
  });
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const line = out.split('\n').find((l) => READY.test(l));
      if (line !== undefined) {
        child.stdout!.off('data', check);
        resolve(READY.exec(line)![1]!);
      }
    };
    child.stdout!.on('data', check);
    void exited.then((exit) => reject(new Error(`serve exited (${exit.code ?? exit.signal}) before it was ready:\n${err}`)));
  });

  const logs = () =>
    err
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const waitFor = <T>(find: () => T | undefined): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found !== undefined) {
          stderrListeners.delete(check);
          resolve(found);
        }
      };
      stderrListeners.add(check);
      void exited.then(() => {
        if (stderrListeners.delete(check)) reject(new Error(`serve exited while a log line was awaited:\n${err}`));
      });
      check();
    });

  return {
    url,
    child,
    stdout: () => out,
    stderr: () => err,
    logs,
    waitForLog: (match) => waitFor(() => logs().find(match)),
    waitForStderr: (text) => waitFor(() => (err.includes(text) ? true : undefined)).then(() => undefined),
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs `serve` expecting it to end by itself (a refused start). */
export async function runServeToExit(
  file: string,
  args: readonly string[] = [],
  env: Record<string, string | undefined> = {},
): Promise<Exit & { stdout: string; stderr: string }> {
  const child = launch(file, args, env);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exit = await new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { ...exit, stdout, stderr };
}

/**
 * Services a test file starts, stopped together when it ends (SIGKILL: what is under test is
 * over by then). Use `start` as startServe and call `stopAll` in afterAll.
 */
export class StartedServices {
  private readonly started: RunningService[] = [];

  start = async (...args: Parameters<typeof startServe>): Promise<RunningService> => {
    const service = await startServe(...args);
    this.started.push(service);
    return service;
  };

  stopAll = async (): Promise<void> => {
    await Promise.all(this.started.splice(0).map((s) => s.stop('SIGKILL')));
  };
}

/**
 * Writes `bytes` on `socket` and resolves once the service at `url` has read them: it has
 * answered a request on another connection sent after them. A serving process reads every
 * connection with bytes waiting before it answers that request, and it sees a signal only after.
 */
export async function writeAndWaitUntilRead(url: string, socket: Socket, bytes: string): Promise<void> {
  await new Promise<void>((resolve, reject) => socket.write(bytes, (error) => (error ? reject(error) : resolve())));
  const answer = await fetch(`${url}/_health`, { headers: { connection: 'close' } });
  await answer.arrayBuffer();
}
