// "Did you mean" for names: the closest candidate within a small edit distance.

/** The largest distance ever suggested (see `limitFor`). */
const MAX_LIMIT = 3;

/** How far a suggestion may be from the name: a third of the longer one's length, 1 to 3 edits. */
function limitFor(name: string, candidate: string): number {
  return Math.max(1, Math.min(MAX_LIMIT, Math.floor(Math.max(name.length, candidate.length) / 3)));
}

/** The closest candidate within the limit, or undefined. */
export function closest(name: string, candidates: Iterable<string>): string | undefined {
  return closestCounting(name, candidates, Infinity).best;
}

function closestCounting(name: string, candidates: Iterable<string>, allowed: number): { best: string | undefined; compared: number } {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = MAX_LIMIT + 1;
  let compared = 0;
  for (const candidate of candidates) {
    if (candidate === name) continue;
    // A length apart by more than the largest limit can never be suggested.
    if (Math.abs(candidate.length - name.length) > MAX_LIMIT) continue;
    // Out of budget part way: no suggestion rather than the best of a partial look.
    if (compared++ >= allowed) return { best: undefined, compared };
    const c = candidate.toLowerCase();
    const d = c === lower ? 0 : distanceWithin(lower, c, bestDistance - 1);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
      if (d === 0) break;
    }
  }
  if (best === undefined) return { best, compared };
  return { best: bestDistance <= limitFor(name, best) ? best : undefined, compared };
}

/**
 * Suggestions for one compile. Each is a pass over the candidates, so thousands of misspelt
 * references among thousands of names (a generated or hostile file) would take quadratic time:
 * after SUGGESTION_BUDGET comparisons in a run, diagnostics come without a suggestion.
 */
export class Suggestions {
  private left: number;
  constructor(budget = SUGGESTION_BUDGET) {
    this.left = budget;
  }

  closest(name: string, candidates: Iterable<string>): string | undefined {
    if (this.left <= 0) return undefined;
    const { best, compared } = closestCounting(name, candidates, this.left);
    this.left -= compared;
    return best;
  }
}

/** Comparisons of names per run that suggestions may spend: well under a second. */
export const SUGGESTION_BUDGET = 2_000_000;

/**
 * Edit distance where swapping two neighbouring characters counts as one edit (optimal string
 * alignment): the commonest typo, `<taks>` for `<task>`, must stay within the limit above.
 */
export function levenshtein(a: string, b: string): number {
  return distanceWithin(a, b, Math.max(a.length, b.length));
}

/** The distance of `a` and `b` when it is at most `max`; otherwise some number above `max`. */
function distanceWithin(a: string, b: string, max: number): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let before = new Array<number>(b.length + 1).fill(0);
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  let curr = new Array<number>(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    curr[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let d = Math.min(prev[j]! + 1, curr[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) {
        d = Math.min(d, before[j - 2]! + 1);
      }
      curr[j] = d;
      if (d < rowMin) rowMin = d;
    }
    // Distances never decrease along a diagonal (a transposition included), so no later row has
    // a smaller minimum: once a row is past max, so is the distance.
    if (rowMin > max) return max + 1;
    [before, prev, curr] = [prev, curr, before];
  }
  return prev[b.length]!;
}
