// What JSON values become as parameter values (docs/language.md, "<parameter>"): a string its
// text, a number or boolean its JSON text, null nothing. By a JSONPath, an array of scalars gives
// several values and an object (or an array holding one) one value, its compact JSON text; by
// name, only scalars and arrays of scalars bind.

/** The text a scalar binds as; null for null, an array or an object. */
export function scalarText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  return null;
}

function isScalarOrNull(value: unknown): boolean {
  return value === null || (typeof value !== 'object' && value !== undefined);
}

/** Adds what one node a JSONPath selected gives to `out`. */
export function addSelected(value: unknown, out: string[]): void {
  if (value === null) return;
  const text = scalarText(value);
  if (text !== null) {
    out.push(text);
    return;
  }
  if (Array.isArray(value) && value.every(isScalarOrNull)) {
    for (const item of value) {
      const t = scalarText(item);
      if (t !== null) out.push(t);
    }
    return;
  }
  out.push(JSON.stringify(value));
}

/** The values a top-level member binds by name (null items of an array left out, as by a JSONPath); null when it does not bind (null, an object, an array holding an object or array). */
export function namedValues(value: unknown): string[] | null {
  const text = scalarText(value);
  if (text !== null) return [text];
  if (!Array.isArray(value)) return null;
  const values: string[] = [];
  for (const item of value) {
    if (item === null) continue;
    const t = scalarText(item);
    if (t === null) return null;
    values.push(t);
  }
  return values;
}
