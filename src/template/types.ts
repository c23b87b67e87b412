// Compiled templates and conditions: the compiler produces them, expansion reads them. They
// live here, below the compiler, so that expansion never imports the compiler.

/** `body-sha256` only in a <deduplicate key> (compiler/templates.ts): the body's digest is taken only on such an endpoint. */
export const SYSTEM_PARAMETERS = ['request-id', 'endpoint', 'environment', 'client-ip', 'user-agent', 'base-url', 'body-sha256'] as const;
export type SystemParameter = (typeof SYSTEM_PARAMETERS)[number];

/** How a placeholder's value is escaped; decided by where the template stands. */
export type Escaping =
  /** as is (plain-text mail bodies, text/plain response bodies, values compared in conditions) */
  | 'none'
  /** a URL: a placeholder at the very start is inserted as is, others encodeURIComponent */
  | 'url'
  /** application/x-www-form-urlencoded value (get-parameter, post-parameter) */
  | 'form'
  /** inside a JSON string: JSON-escaped, without the quotes */
  | 'json'
  /** XML text or attribute value */
  | 'xml'
  /** HTML text */
  | 'html'
  /** header values, mail addresses, subjects: a value with CR or LF fails the task */
  | 'header';

export type TemplatePart =
  | { readonly kind: 'literal'; readonly text: string }
  /** a declared parameter of the endpoint (shadows a system parameter of the same name) */
  | { readonly kind: 'parameter'; readonly name: string }
  | { readonly kind: 'system'; readonly name: SystemParameter }
  /** an intermediate value the element declares as input */
  | { readonly kind: 'intermediate'; readonly name: string }
  /** ${env:NAME}: a secret for logs and dry-run */
  | { readonly kind: 'env'; readonly name: string }
  /** only in <error> actions */
  | { readonly kind: 'internal-error-text' };

export interface Template {
  /** The text as written (after XML entity decoding). */
  readonly source: string;
  readonly escaping: Escaping;
  /** Literal parts are already in their final, escaped form for the context. */
  readonly parts: readonly TemplatePart[];
}

export type ComparisonOperator = 'equals' | 'notequals' | 'gt' | 'ge' | 'lt' | 'le';
export type Condition =
  | {
      readonly kind: 'compare';
      readonly operator: ComparisonOperator;
      readonly left: Template;
      readonly right: Template;
      /** e.g. `${newsletter} equals "yes"`, for plans */
      readonly text: string;
    }
  | {
      readonly kind: 'predicate';
      readonly operator: 'isempty' | 'hasmultiple';
      readonly left: Template;
      readonly expected: boolean;
      readonly text: string;
    };

export interface NamedTemplate {
  readonly name: string;
  readonly value: Template;
}
