// Expansion of compiled templates: a single pass, so a value is never expanded again and
// request data can never inject a placeholder.

import type { SystemParameter, Template, TemplatePart } from './types.js';
import { escapeValue, UnsafeValueError } from './escape.js';

export type PlaceholderPart = Exclude<TemplatePart, { kind: 'literal' }>;

export interface ExpansionScope {
  /** Bound parameters (already joined with the separator). */
  readonly parameters: ReadonlyMap<string, string>;
  readonly system: Readonly<Record<SystemParameter, string>>;
  readonly intermediate?: ReadonlyMap<string, string>;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly internalErrorText?: string;
  /**
   * The delivery id of a request to an endpoint with <deduplicate> (its key, hashed): tasks derive
   * their Idempotency-Key and webhook-id from it instead of the request id, so a sender's retry
   * sends the same keys downstream as its first attempt. Absent: from the request id.
   */
  readonly delivery?: string;
  /**
   * Dry-run hook: a value to insert verbatim (not escaped) instead of the real one, e.g.
   * `***` for secrets or `<from fetch-id>` for an intermediate value.
   */
  readonly verbatim?: (part: PlaceholderPart) => string | undefined;
}

export class MissingValueError extends Error {
  override readonly name = 'MissingValueError';
}

export function placeholderValue(part: PlaceholderPart, scope: ExpansionScope): string {
  switch (part.kind) {
    case 'parameter': {
      const v = scope.parameters.get(part.name);
      if (v === undefined) throw new MissingValueError(`parameter "${part.name}" has no value`);
      return v;
    }
    case 'system':
      return scope.system[part.name];
    case 'intermediate': {
      const v = scope.intermediate?.get(part.name);
      if (v === undefined) throw new MissingValueError(`intermediate value "${part.name}" has not been produced`);
      return v;
    }
    case 'env': {
      const v = scope.env[part.name];
      if (v === undefined) throw new MissingValueError(`environment variable ${part.name} is not set`);
      return v;
    }
    case 'internal-error-text':
      return scope.internalErrorText ?? '';
  }
}

/** Where a placeholder's value landed in the expanded text, for checks that read it by position (url.ts). */
export interface FilledRange {
  readonly start: number;
  readonly end: number;
  readonly part: PlaceholderPart;
}

/** `filled`, when given, receives where each placeholder's (escaped) value stands in the result. */
export function expandTemplate(template: Template, scope: ExpansionScope, filled?: FilledRange[]): string {
  const parts = template.parts;
  if (parts.length === 1 && parts[0]!.kind === 'literal') return parts[0]!.text;
  let out = '';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.kind === 'literal') {
      out += part.text;
      continue;
    }
    const shown = scope.verbatim?.(part);
    if (shown !== undefined) {
      out += shown;
      continue;
    }
    let value: string;
    try {
      value = escapeValue(template.escaping, placeholderValue(part, scope), i === 0);
    } catch (error) {
      // The placeholder whose value could not be escaped is the one to blame.
      throw error instanceof UnsafeValueError && error.culprits.length === 0 ? error.blaming([part]) : error;
    }
    filled?.push({ start: out.length, end: out.length + value.length, part });
    out += value;
  }
  return out;
}

/** True when expanding the template reads a secret (an env value), for masking. */
export function usesEnv(template: Template): boolean {
  return template.parts.some((p) => p.kind === 'env');
}

export function usesIntermediate(template: Template): boolean {
  return template.parts.some((p) => p.kind === 'intermediate');
}
