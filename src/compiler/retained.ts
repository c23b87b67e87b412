// The shape of what the compiled application keeps for as long as it is served. A large
// application holds hundreds of thousands of strings and lists; how each is made decides whether
// the served process needs 50 MB or three times that. Figures: docs/performance.md, "Memory".

/**
 * The engine's own copy of `text`, one per distinct text: a flat string that refers to nothing
 * else. A slice of the document (the engine makes one for any substring of 13 characters or
 * more) would keep the whole file in memory for as long as the slice lives, and a text built by
 * concatenation keeps every piece; identical texts (the same URL, header or address in every
 * endpoint) share one string.
 */
export function internalized(text: string): string {
  if (text.length < 2) return text;
  const holder: Record<string, true> = {};
  holder[text] = true;
  for (const key in holder) return key;
  return text;
}

/** A text used as read, for what is let go before the document is (validate). */
export function asRead(text: string): string {
  return text;
}

/** The empty list every AST node without items shares (a new [] costs 32 bytes each). */
export const NONE: readonly never[] = Object.freeze([]);

/**
 * `list` as kept: of its exact size (a list grown by push keeps room for 16), and the shared
 * empty list when it has no items.
 */
export function exact<T>(list: readonly T[]): readonly T[] {
  return list.length === 0 ? NONE : list.slice();
}
