// Times as ISO 8601 text (2026-11-28T00:10:05.123Z), written once per request by the log line
// and the delivery log. Date#toISOString cost more than the rest of a delivery's record on the
// thread that answers (performance-log.md, 2026-11-28): the text up to the second is made once
// per second, the milliseconds appended.

let second = Number.NaN;
let prefix = '';

/** `ms` (epoch milliseconds, a whole number) as Date#toISOString writes it. */
export function isoTime(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s !== second) {
    second = s;
    // A whole second ends in ".000Z": keep what comes before its milliseconds.
    prefix = new Date(s * 1000).toISOString().slice(0, -4);
  }
  const milli = ms - s * 1000;
  return prefix + (milli < 10 ? '00' : milli < 100 ? '0' : '') + milli + 'Z';
}
