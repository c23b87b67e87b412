// application/x-www-form-urlencoded and query strings, strict: an invalid percent-encoding
// is the client's mistake and gets a 400, instead of being passed on half-decoded.

export type ValueMap = Map<string, string[]>;

/** Adds the pairs of `text` to `into`; returns a problem detail, or null when well-formed. */
export function parseUrlEncoded(text: string, into: ValueMap, what: string): string | null {
  if (text.length === 0) return null;
  let start = 0;
  const end = text.length;
  while (start <= end) {
    let amp = text.indexOf('&', start);
    if (amp < 0) amp = end;
    if (amp > start) {
      const eq = text.indexOf('=', start);
      const hasValue = eq >= 0 && eq < amp;
      const rawName = text.slice(start, hasValue ? eq : amp);
      const rawValue = hasValue ? text.slice(eq + 1, amp) : '';
      const name = decodeComponent(rawName);
      const value = decodeComponent(rawValue);
      if (name === null || value === null) {
        return `malformed ${what}: invalid percent-encoding in "${truncate(hasValue ? `${rawName}=${rawValue}` : rawName)}"`;
      }
      if (name.length > 0) {
        const list = into.get(name);
        if (list === undefined) into.set(name, [value]);
        else list.push(value);
      }
    }
    start = amp + 1;
  }
  return null;
}

function decodeComponent(raw: string): string | null {
  // Fast path: most names and values need no decoding at all.
  if (raw.indexOf('%') < 0 && raw.indexOf('+') < 0) return raw;
  const spaced = raw.indexOf('+') < 0 ? raw : raw.replace(/\+/g, ' ');
  if (spaced.indexOf('%') < 0) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return null;
  }
}

function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
