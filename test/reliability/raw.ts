// Raw HTTP over node:net for the reliability suites: malformed requests that fetch and
// node:http refuse to send (conflicting lengths, bad bytes, `..` segments kept as written),
// trickled requests, and the answer read as the server wrote it.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';

export const RELIABILITY_FIXTURES = fileURLToPath(new URL('../../fixtures/reliability/', import.meta.url));

export interface RawAnswer {
  /** The status of the first answer, or null when the connection closed without one. */
  readonly status: number | null;
  /** Everything the server wrote, as latin1 text. */
  readonly text: string;
  /** The headers and body of the first answer (body as latin1). */
  readonly body: string;
  /** True when the hang guard ended the wait: the server neither answered nor closed. */
  readonly hung: boolean;
  /** The connection was closed by the server (not by our hang guard). */
  readonly closedByServer: boolean;
}

export interface RawOptions {
  /** Written this many bytes at a time, `delayMs` apart. Default: all at once. */
  readonly chunkSize?: number;
  readonly delayMs?: number;
  /** Stop waiting after this long (a hang guard, not a speed assertion). */
  readonly guardMs?: number;
  /** Resolve as soon as a complete answer head has arrived, without waiting for the close. */
  readonly untilAnswer?: boolean;
}

/** Sends `request` verbatim to `origin` (http://host:port) and reads until the server closes. */
export function rawRequest(origin: string, request: string | Buffer, options: RawOptions = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(origin);
  const bytes = typeof request === 'string' ? Buffer.from(request, 'latin1') : request;
  const guardMs = options.guardMs ?? 15_000;
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const received: Buffer[] = [];
    let done = false;
    let writer: NodeJS.Timeout | undefined;
    const finish = (hung: boolean, closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(guard);
      clearTimeout(writer);
      socket.destroy();
      const text = Buffer.concat(received).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      const headEnd = text.indexOf('\r\n\r\n');
      resolve({ status: m ? Number(m[1]) : null, text, body: headEnd >= 0 ? text.slice(headEnd + 4) : '', hung, closedByServer });
    };
    const guard = setTimeout(() => finish(true, false), guardMs);
    socket.on('data', (d: Buffer) => {
      received.push(d);
      if (options.untilAnswer && Buffer.concat(received).includes('\r\n\r\n')) finish(false, false);
    });
    socket.on('end', () => finish(false, true));
    socket.on('close', () => finish(false, true));
    // A reset after the answer (the server cut a body it refused) still counts as closed.
    socket.on('error', () => finish(false, true));
    socket.on('connect', () => {
      const size = options.chunkSize;
      if (size === undefined) {
        socket.write(bytes);
        return;
      }
      let offset = 0;
      const next = () => {
        if (done || offset >= bytes.length || socket.destroyed) return;
        socket.write(bytes.subarray(offset, offset + size));
        offset += size;
        writer = setTimeout(next, options.delayMs ?? 0);
      };
      next();
    });
  });
}

/** A request head with `Connection: close`, so the server closes once it has answered. */
export function head(requestLine: string, headers: Record<string, string> = {}): string {
  const lines = [requestLine, 'Host: 127.0.0.1', 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return lines.join('\r\n') + '\r\n\r\n';
}

/** Resident memory of a process from /proc (Linux): now and its peak, in MiB. */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}
