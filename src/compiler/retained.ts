// The shape of what the compiled application keeps for as long as it is served. A large
// application holds hundreds of thousands of strings and lists; how each is made decides whether
// the served process needs 50 MB or three times that. Figures: docs/performance-log.md, "Memory".

/**
 * The engine's own copy of `text`, one per distinct text: a flat string that refers to nothing
 * else. A slice of the document (the engine makes one for any substring of 13 characters or
 * more) would keep the whole file in memory for as long as the slice lives, and a text built by
 * concatenation keeps every piece; identical texts (the same URL, header or address in every
 * endpoint) share one string. Property names are such copies: the text is made one, read back,
 * and removed again, on an object in dictionary mode, where that changes no hidden class.
 */
export function internalized(text: string): string {
  if (text.length < 2) return text;
  HOLDER[text] = true;
  let kept = text;
  for (const name in HOLDER) kept = name;
  delete HOLDER[text];
  return kept;
}
const HOLDER: Record<string, true> = Object.create(null) as Record<string, true>;
// Deleting a property other than the last one added puts an object in dictionary mode for good.
HOLDER.first = true;
HOLDER.second = true;
delete HOLDER.first;
delete HOLDER.second;

/**
 * Texts read from one document, each kept once: the first time through internalized, then from
 * a map, which is several times cheaper than internalizing again a text seen before.
 */
export class Interner {
  private readonly known = new Map<string, string>();

  readonly keep = (text: string): string => {
    let kept = this.known.get(text);
    if (kept === undefined) {
      kept = internalized(text);
      this.known.set(kept, kept);
    }
    return kept;
  };
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
