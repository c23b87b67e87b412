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

export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  let curr = new Array<number>(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    curr[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      curr[j] = Math.min(prev[j]! + 1, curr[j - 1]! + 1, prev[j - 1]! + cost);
    }
    [prev, curr] = [curr, prev];
  }
  return prev[b.length]!;
}
