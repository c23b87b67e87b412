// Settings of a serving process, already checked: the command line's job is to reject bad
// values with a usage error before any process starts.

import type { HostAllowlist } from '../tasks/host-allowlist.js';
import type { LogFormat } from './log.js';

export interface ServeSettings {
  /** The endpoints.xml as given. */
  readonly file: string;
  readonly port: number;
  readonly host: string;
  /** '' for the root, else '/a/b' (no trailing slash). */
  readonly basePath: string;
  /** null: no CORS; '*': any origin; else the allowed origins. */
  readonly cors: '*' | ReadonlySet<string> | null;
  readonly workers: number;
  readonly smtpUrl: string | undefined;
  readonly maxBodyBytes: number;
  readonly requestTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
  readonly logFormat: LogFormat;
  readonly color: boolean;
  readonly watch: boolean;
  /** --allow-task-host: the hosts HttpRequest tasks may call; null: any host. */
  readonly allowedTaskHosts: HostAllowlist | null;
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `500ms`, `10s`, `2m`, `1h`; null when malformed or not positive. */
export function parseDuration(text: string): number | null {
  const match = DURATION.exec(text.trim());
  if (match === null) return null;
  const ms = Math.round(Number(match[1]) * UNIT_MS[match[2]!]!);
  return ms > 0 && ms <= 2_147_483_647 ? ms : null;
}

const SIZE = /^(\d+)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?$/i;
const SIZE_UNIT: Record<string, number> = { b: 1, k: 1024, kb: 1000, kib: 1024, m: 1024 ** 2, mb: 1000 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1000 ** 3, gib: 1024 ** 3 };

/** Bytes, optionally with a unit (`10MiB`, `512k`); null when malformed or not positive. */
export function parseSize(text: string): number | null {
  const match = SIZE.exec(text.trim());
  if (match === null) return null;
  const bytes = Number(match[1]) * SIZE_UNIT[(match[2] ?? 'b').toLowerCase()]!;
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : null;
}

export function formatDuration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** `http://HOST:PORT`, with an IPv6 host in brackets. */
export function originOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
