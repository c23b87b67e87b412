// Escaping per context. Literal template parts are escaped once at compile time with the same
// functions that escape placeholder values per request.

import type { Escaping, Template, TemplatePart } from './types.js';

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]!);
}
const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeXml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => XML_ENTITIES[c]!);
}
const XML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

// What JSON.stringify would change in a string (surrogates: a lone one is escaped), and the two
// line separators escaped below.
const JSON_SPECIAL = /["\\\u0000-\u001f\u2028\u2029\ud800-\udfff]/;

export function escapeJsonString(value: string): string {
  // Most literal text needs nothing: compiling thousands of JSON bodies, and every value per
  // request, skips the three copies below.
  if (!JSON_SPECIAL.test(value)) return value;
  return JSON.stringify(value).slice(1, -1).replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** application/x-www-form-urlencoded, as URLSearchParams writes it. */
export function escapeForm(value: string): string {
  return encodeURIComponent(value)
    .replace(/%20/g, '+')
    .replace(/[!'()~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/**
 * A value that cannot be used where its template stands (a line break in a header, not one
 * email address). It knows which placeholders supplied the value, so a request can be refused
 * naming the parameter to blame, and says what is wrong without repeating the value.
 */
export class UnsafeValueError extends Error {
  override readonly name = 'UnsafeValueError';
  /** What is wrong, as a predicate without the value ("contains a line break"): safe to tell a client. */
  readonly reason: string;
  /** The placeholders whose values made the unusable text; empty: the configuration alone made it. */
  readonly culprits: readonly TemplatePart[];

  constructor(message: string, options: { readonly reason: string; readonly culprits?: readonly TemplatePart[] }) {
    super(message);
    this.reason = options.reason;
    this.culprits = options.culprits ?? [];
  }

  /** The same problem, blamed on the placeholders that filled the template. */
  blaming(culprits: readonly TemplatePart[]): UnsafeValueError {
    return new UnsafeValueError(this.message, { reason: this.reason, culprits });
  }
}

/** The placeholders of a template: who supplied a value it made. */
export function placeholdersOf(template: Template): TemplatePart[] {
  return template.parts.filter((p) => p.kind !== 'literal');
}

/** Escapes a placeholder's value for its context; `first` is true for the very first part of a URL. */
export function escapeValue(escaping: Escaping, value: string, first: boolean): string {
  switch (escaping) {
    case 'none':
      return value;
    case 'url':
      return first ? value : encodeURIComponent(value);
    case 'form':
      return escapeForm(value);
    case 'json':
      return escapeJsonString(value);
    case 'xml':
      return escapeXml(value);
    case 'html':
      return escapeHtml(value);
    case 'header':
      if (/[\r\n]/.test(value)) throw new UnsafeValueError('a value contains a line break (CR or LF), which is not allowed here', { reason: 'contains a line break' });
      return value;
  }
}
