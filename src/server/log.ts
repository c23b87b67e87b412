// Structured logs on stderr: JSON lines for machines, colored lines for a person at a
// terminal. Callers pass only fields that are safe to log; parameter values never are.

import cluster from 'node:cluster';
import { Chalk } from 'chalk';
import { isoTime } from '../iso-time.js';

export type LogFormat = 'json' | 'pretty';
export type LogLevel = 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
  /** One line per answered request. */
  request(fields: RequestLogFields): void;
}

export interface RequestLogFields {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly endpoint: string | null;
  readonly status: number;
  readonly durationMs: number;
  /** The connection ended before the whole answer was written. */
  readonly aborted: boolean;
}

/**
 * Lines gathered for a few milliseconds and written together: stderr is written synchronously
 * when it is a file or a pipe, and one system call per request line cost more than the rest
 * of a simple request. Whatever is pending at exit is written then.
 */
class BatchedWriter {
  private pending = '';
  private timer: NodeJS.Timeout | null = null;
  private readonly flushBound = () => this.flush();

  constructor(private readonly stream: NodeJS.WriteStream) {
    process.on('exit', this.flushBound);
  }

  write(line: string): void {
    this.pending += line;
    if (this.pending.length > MAX_PENDING) this.flush();
    else if (this.timer === null) this.timer = setTimeout(this.flushBound, FLUSH_MS).unref();
  }

  flush(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    // Synchronous for files and pipes (also inside an 'exit' handler), asynchronous for a TTY.
    this.stream.write(text);
  }
}
const FLUSH_MS = 20;
const MAX_PENDING = 64 * 1024;

/** Many requests end within one second under load: isoTime formats its date once. */
function isoNow(): string {
  return isoTime(Date.now());
}

export function createLogger(format: LogFormat, color: boolean, out: { write(text: string): void } = new BatchedWriter(process.stderr)): Logger {
  if (format === 'json') {
    return {
      log(level, message, fields) {
        out.write(JSON.stringify({ time: isoNow(), level, pid: process.pid, msg: message, ...fields }) + '\n');
      },
      request(f) {
        // Hand-built: this line is written once per request. Only the path can hold
        // characters that need escaping; method, id and endpoint name cannot.
        out.write(
          `{"time":"${isoNow()}","level":"${f.status >= 500 ? 'error' : 'info'}","pid":${process.pid},"msg":"request","requestId":"${f.requestId}","method":"${f.method}","path":${JSON.stringify(f.path)},"endpoint":${f.endpoint === null ? 'null' : `"${f.endpoint}"`},"status":${f.status},"durationMs":${f.durationMs}${f.aborted ? ',"aborted":true' : ''}}\n`,
        );
      },
    };
  }
  const c = new Chalk({ level: color ? 1 : 0 });
  const levelText: Record<LogLevel, string> = { info: c.green('INFO '), warn: c.yellow('WARN '), error: c.red('ERROR') };
  // With workers, which process wrote a line matters when one of them misbehaves.
  const who = cluster.isWorker ? ` ${c.gray(`[${process.pid}]`)}` : '';
  const time = () => c.gray(isoNow().slice(11, 23)) + who;
  const rest = (fields: Record<string, unknown> | undefined) =>
    fields === undefined
      ? ''
      : Object.entries(fields)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => ` ${c.gray(k + '=')}${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join('');
  return {
    log(level, message, fields) {
      out.write(`${time()} ${levelText[level]} ${message}${rest(fields)}\n`);
    },
    request(f) {
      const status = f.status >= 500 ? c.red(String(f.status)) : f.status >= 400 ? c.yellow(String(f.status)) : c.green(String(f.status));
      out.write(
        `${time()} ${levelText[f.status >= 500 ? 'error' : 'info']} ${status} ${f.method} ${f.path} ${c.gray(`${f.durationMs}ms`)}${f.aborted ? c.yellow(' aborted') : ''} ${c.gray(f.requestId)}\n`,
      );
    },
  };
}
