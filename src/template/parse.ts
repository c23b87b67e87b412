// Splits `${...}` templates once, at compile time. Resolution of names (parameter, system,
// intermediate value, env) is the compiler's job: it knows the scope.

export type RawSegment =
  | { readonly kind: 'text'; readonly text: string }
  /** offset: index of `$` in the source, for diagnostics */
  | { readonly kind: 'placeholder'; readonly name: string; readonly offset: number };

export interface TemplateSyntaxError {
  readonly message: string;
  readonly offset: number;
}

export type ParsedTemplate =
  | { readonly ok: true; readonly segments: readonly RawSegment[] }
  | { readonly ok: false; readonly error: TemplateSyntaxError };

export function parseTemplateSource(source: string): ParsedTemplate {
  const segments: RawSegment[] = [];
  let text = '';
  let i = 0;
  while (i < source.length) {
    const start = source.indexOf('${', i);
    if (start < 0) {
      text += source.slice(i);
      break;
    }
    text += source.slice(i, start);
    const end = source.indexOf('}', start + 2);
    if (end < 0) {
      return { ok: false, error: { message: 'a placeholder "${" is not closed with "}"', offset: start } };
    }
    const name = source.slice(start + 2, end).trim();
    if (name === '') return { ok: false, error: { message: 'an empty placeholder "${}"', offset: start } };
    if (text !== '') segments.push({ kind: 'text', text });
    text = '';
    segments.push({ kind: 'placeholder', name, offset: start });
    i = end + 1;
  }
  if (text !== '') segments.push({ kind: 'text', text });
  return { ok: true, segments };
}

/** True when the text holds a placeholder (for attributes that must be literal). */
export function hasPlaceholder(source: string): boolean {
  return source.includes('${');
}
