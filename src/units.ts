// Durations and sizes, as written in endpoints.xml and on the command line, and as shown back in
// help texts, logs and plans. The lowest layer: it imports nothing from the project, and the
// compiler, the CLI and the server all read units through it, so a value accepted in one place
// is accepted (and bounded) everywhere.

/**
 * The longest delay Node.js timers take: setTimeout with more fires after 1 ms instead, with a
 * TimeoutOverflowWarning. Every duration that reaches a timer is at most this (about 24.8 days).
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A task's timeout per attempt when it gives none (its `timeout` attribute). */
export const DEFAULT_TASK_TIMEOUT_MS = 30_000;

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const DURATION_UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * `500ms`, `10s`, `1.5m`, `2h` to milliseconds; null when malformed, when it rounds to 0 ms, or
 * when it is longer than MAX_TIMER_MS. A bare number is refused: 60 could mean seconds or ms.
 */
export function parseDuration(text: string): number | null {
  const match = DURATION.exec(text.trim());
  if (match === null) return null;
  const ms = Math.round(Number(match[1]) * DURATION_UNIT_MS[match[2]!]!);
  return ms > 0 && ms <= MAX_TIMER_MS ? ms : null;
}

/** Why parseDuration refused `text`, as the end of a sentence ("expected …"). */
export function durationExpectation(text: string): string {
  const trimmed = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) return `a duration with a unit, such as 500ms, 10s or 2m (a bare number has none: write ${trimmed}ms or ${trimmed}s)`;
  const match = DURATION.exec(trimmed);
  if (match !== null && Number(match[1]) * DURATION_UNIT_MS[match[2]!]! > MAX_TIMER_MS) return `a duration of at most ${Math.floor(MAX_TIMER_MS / 3_600_000)}h (${MAX_TIMER_MS}ms, the longest timer Node.js can set)`;
  // Days are an age's unit (parseAge), not a wait's: say how to write one in hours.
  const days = /^(\d+(?:\.\d+)?)d$/.exec(trimmed);
  if (days !== null) return `a positive duration in ms, s, m or h, such as 500ms, 10s or 2m (days are not taken here: write ${trimmed} as ${Number(days[1]) * 24}h)`;
  return 'a positive duration in ms, s, m or h, such as 500ms, 10s or 2m';
}

/** The largest unit that divides `ms` evenly: `1m`, `30s`, `300ms` (never rounded). */
export function formatDuration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/**
 * An age: how long something is kept, which no timer waits for, so days are written too and the
 * timer's bound does not apply. Stores count ages in whole seconds: a fraction is rounded up.
 */
const AGE = /^(\d+(?:\.\d+)?)(s|m|h|d)$/;
const AGE_UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
export const MAX_AGE_MS = 3650 * 86_400_000;

/** `14d`, `36h`, `90m`, `30s` to milliseconds, whole seconds; null when malformed, below 1s or beyond 3650d. */
export function parseAge(text: string): number | null {
  const match = AGE.exec(text.trim());
  if (match === null) return null;
  const ms = Math.ceil((Number(match[1]) * AGE_UNIT_MS[match[2]!]!) / 1000) * 1000;
  return ms >= 1000 && ms <= MAX_AGE_MS ? ms : null;
}

/** Why parseAge refused `text`, as the end of a sentence ("expected …"). */
export function ageExpectation(text: string): string {
  const trimmed = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) return `a duration with a unit, such as 14d, 36h or 30m (a bare number has none: write ${trimmed}d or ${trimmed}h)`;
  if (/^\d+(?:\.\d+)?ms$/.test(trimmed)) return 'a duration of at least 1s, such as 14d, 36h or 30m (ages are kept in whole seconds)';
  const match = AGE.exec(trimmed);
  if (match !== null && Number(match[1]) * AGE_UNIT_MS[match[2]!]! > MAX_AGE_MS) return `a duration of at most ${MAX_AGE_MS / 86_400_000}d`;
  return 'a positive duration in s, m, h or d, such as 14d, 36h or 30m';
}

/** An age in the largest unit that divides it evenly: `14d`, `36h`, `90s`; parseAge reads it back. */
export function formatAge(ms: number): string {
  for (const unit of ['d', 'h', 'm'] as const) if (ms % AGE_UNIT_MS[unit]! === 0) return `${ms / AGE_UNIT_MS[unit]!}${unit}`;
  return `${Math.ceil(ms / 1000)}s`;
}

const SIZE = /^(\d+)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?$/i;
const SIZE_UNIT: Readonly<Record<string, number>> = {
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
};

/** Bytes, a bare number or with a unit (`1024`, `512k`, `10MiB`, `10 MiB`); null when malformed or not positive. */
export function parseSize(text: string): number | null {
  const match = SIZE.exec(text.trim());
  if (match === null) return null;
  const bytes = Number(match[1]) * SIZE_UNIT[(match[2] ?? 'b').toLowerCase()]!;
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : null;
}

/** The largest binary unit that divides `bytes` evenly: `10 MiB`, `512 KiB`, `1000 B`; parseSize reads it back. */
export function formatSize(bytes: number): string {
  if (bytes <= 0 || !Number.isSafeInteger(bytes)) return `${bytes} B`;
  if (bytes % 1024 ** 3 === 0) return `${bytes / 1024 ** 3} GiB`;
  if (bytes % 1024 ** 2 === 0) return `${bytes / 1024 ** 2} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} B`;
}
