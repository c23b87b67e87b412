// The `signed` template of a `<signature>` (docs/language.md, "<signature>"): what bytes a sender
// signs, written over placeholders: {body}, {timestamp}, {id}, {method}, {url},
// {header:Name}, {json:/pointer} and {form-sorted}. Parsed once, at compile time, into the parts
// verify-template.ts feeds to the HMAC or the public key in order; {json:/pointer} reads a field
// of the JSON body (Mailgun signs its token there). A brace is always a
// placeholder's, so a template holds no literal `{` or `}`.

import { JSON_SOURCE, headerName, jsonPointer } from './refusal.js';
import type { SignedPart } from './signature-description.js';

export const SIGNED_PLACEHOLDERS = ['body', 'timestamp', 'id', 'method', 'url', 'header:Name', 'json:/pointer', 'form-sorted'] as const;

const SIMPLE = new Set(['body', 'timestamp', 'id', 'method', 'url', 'form-sorted']);
// RFC 9110 §5.1: a field name is a token.
export const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export type TemplateOutcome =
  { readonly ok: true; readonly parts: readonly SignedPart[] } | { readonly ok: false; readonly message: string; readonly placeholder?: string | undefined };

/** `suggest` picks the closest placeholder name for a misspelt one. */
export function parseSignedTemplate(text: string, suggest: (name: string, candidates: readonly string[]) => string | undefined): TemplateOutcome {
  const parts: SignedPart[] = [];
  let literal = '';
  let at = 0;
  while (at < text.length) {
    const open = text.indexOf('{', at);
    const close = text.indexOf('}', at);
    if (close >= 0 && (open < 0 || close < open)) return { ok: false, message: `a "}" at character ${close + 1} closes no placeholder` };
    if (open < 0) {
      literal += text.slice(at);
      break;
    }
    literal += text.slice(at, open);
    const end = text.indexOf('}', open);
    if (end < 0) return { ok: false, message: `the placeholder at character ${open + 1} is not closed with "}"` };
    const part = placeholder(text.slice(open + 1, end), suggest);
    if ('ok' in part) return part;
    if (literal.length > 0) parts.push({ kind: 'literal', text: literal });
    literal = '';
    parts.push(part);
    at = end + 1;
  }
  if (literal.length > 0) parts.push({ kind: 'literal', text: literal });
  return { ok: true, parts };
}

function placeholder(name: string, suggest: (name: string, candidates: readonly string[]) => string | undefined): SignedPart | TemplateOutcome {
  if (SIMPLE.has(name)) return { kind: name } as SignedPart;
  if (name.startsWith('header:')) {
    const header = name.slice('header:'.length);
    if (FIELD_NAME.test(header)) return { kind: 'header', header: headerName(header) };
    return { ok: false, message: `{${name}} does not name a header: write {header:Name} with a header name`, placeholder: name };
  }
  if (name.startsWith(JSON_SOURCE)) {
    if (jsonPointer(name.slice(JSON_SOURCE.length)) !== null) return { kind: 'header', header: headerName(name) };
    return { ok: false, message: `{${name}} does not name a field of the body: write {json:/name} with a JSON pointer`, placeholder: name };
  }
  const suggestion = suggest(name, [...SIMPLE, 'header', 'json']);
  const hint = suggestion === undefined ? ` Use ${SIGNED_PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}.` : ` Did you mean {${suggestion}}?`;
  return { ok: false, message: `{${name}} is not a placeholder of signed.${hint}`, placeholder: name };
}

/** Whether the parts use a placeholder of this kind. */
export function uses(parts: readonly SignedPart[], kind: SignedPart['kind']): boolean {
  return parts.some((part) => part.kind === kind);
}
