// "Did you mean" for names: the closest candidate within a small edit distance.

export function closest(name: string, candidates: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    if (candidate === name) continue;
    const c = candidate.toLowerCase();
    const d = c === lower ? 0 : levenshtein(lower, c);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  if (best === undefined) return undefined;
  const limit = Math.max(1, Math.min(3, Math.floor(Math.max(name.length, best.length) / 3)));
  return bestDistance <= limit ? best : undefined;
}

/**
 * Edit distance where swapping two neighbouring characters counts as one edit (optimal string
 * alignment): the commonest typo, `<taks>` for `<task>`, must stay within the limit above.
 */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let before = new Array<number>(b.length + 1).fill(0);
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  let curr = new Array<number>(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    curr[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let d = Math.min(prev[j]! + 1, curr[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) {
        d = Math.min(d, before[j - 2]! + 1);
      }
      curr[j] = d;
    }
    [before, prev, curr] = [prev, curr, before];
  }
  return prev[b.length]!;
}
