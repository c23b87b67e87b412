// Compiles `${...}` templates: names resolved against the element's scope once, literal parts
// escaped once for their context, so expansion per request is a plain concatenation.

import { type ParameterDeclaration } from './ast.js';
import { SYSTEM_PARAMETERS, type Escaping, type Template, type TemplatePart } from '../template/types.js';
import { type Position } from '../position.js';
import type { CompileContext } from './context.js';
import { parseTemplateSource } from '../template/parse.js';
import { escapeForm, escapeJsonString, escapeXml } from '../template/escape.js';

const SYSTEM: ReadonlySet<string> = new Set(SYSTEM_PARAMETERS);

/** Which names a template may use where it stands. */
export interface NameScope {
  readonly parameters: ReadonlyMap<string, ParameterDeclaration>;
  /** Intermediate values the element declares as inputs. */
  readonly inputs: ReadonlySet<string>;
  /** Values some task of the endpoint produces (for a better message when an input is not declared). */
  readonly produced: ReadonlySet<string>;
  /** <error> actions: system parameters, env and internal-error-text only. */
  readonly errorAction: boolean;
  /** Settings files: env only. */
  readonly envOnly: boolean;
  /** e.g. "in this task" */
  readonly where: string;
  /** A task's elements: what it sends leaves the service (base-url-from-host). */
  readonly task?: boolean;
  /** <deduplicate key>: the one place ${body-sha256} may stand (the digest is taken only for it). */
  readonly bodyDigest?: boolean;
  /** What keeps an arbitrary client from using the endpoint (tasks only; absent: nothing), for recipient-from-request. */
  readonly clientGuards?: readonly ClientGuard[];
}

/** Something that stops any client from using an endpoint freely: hash authentication (security.xml), a CAPTCHA, a rate limit. */
export type ClientGuard = 'hash' | 'captcha' | 'rate-limit';

export const ENV_ONLY_SCOPE: NameScope = {
  parameters: new Map(),
  inputs: new Set(),
  produced: new Set(),
  errorAction: false,
  envOnly: true,
  where: 'in this file (only ${env:NAME} is available)',
};

/** How literal text is written for a context; placeholders are escaped per request. */
export function escapeLiteral(escaping: Escaping, text: string): string {
  switch (escaping) {
    case 'form':
      return escapeForm(text);
    case 'json':
      return escapeJsonString(text);
    case 'xml':
      return escapeXml(text);
    default:
      return text;
  }
}

/** Resolves the placeholders of `source` into parts; null after reporting a problem. */
export function compileParts(ctx: CompileContext, source: string, escaping: Escaping, scope: NameScope, at: Position): readonly TemplatePart[] | null {
  // Most texts of a configuration hold no placeholder: one literal, without splitting.
  if (!source.includes('${')) return ctx.shared.only(escapeLiteral(escaping, source));
  const parsed = parseTemplateSource(source);
  if (!parsed.ok) {
    ctx.diagnostics.report('template-syntax', at, parsed.error.message);
    return null;
  }
  const parts: TemplatePart[] = [];
  let ok = true;
  for (const segment of parsed.segments) {
    if (segment.kind === 'text') {
      // The parser never yields two texts in a row: each literal is whole.
      const text = escapeLiteral(escaping, segment.text);
      if (text !== '') parts.push(ctx.shared.part(text));
      continue;
    }
    const part = resolveName(ctx, segment.name, scope, at);
    if (part === null) ok = false;
    else parts.push(part);
  }
  // A copy of the exact size: an array grown by push keeps room for 16, and every template of
  // the application is kept for as long as it is served.
  return ok ? parts.slice() : null;
}

export function compileTemplate(ctx: CompileContext, source: string, escaping: Escaping, scope: NameScope, at: Position): Template | null {
  const parts = compileParts(ctx, source, escaping, scope, at);
  if (parts === null) return null;
  // A line break in a header, address or subject fails the task when it comes from a value;
  // written into the configuration it would fail every time, so it is refused now.
  if (escaping === 'header' && parts.some((p) => p.kind === 'literal' && /[\r\n]/.test(p.text))) {
    ctx.diagnostics.report('invalid-value', at, 'a header value, mail address or subject', source, 'a single line');
    return null;
  }
  return ctx.shared.template(source, escaping, parts);
}

/** A literal-only template (values that may not hold placeholders, built by the compiler). */
export function literalTemplate(ctx: CompileContext, text: string, escaping: Escaping): Template {
  return { source: text, escaping, parts: ctx.shared.only(escapeLiteral(escaping, text)) };
}

// Placeholder parts are read-only and repeat throughout an application (the same few names in
// every endpoint): one object per kind and name, kept for the whole application, instead of one
// per placeholder (hundreds of thousands in a large application, all retained).
const PARAMETER_PARTS = new Map<string, TemplatePart>();
const INTERMEDIATE_PARTS = new Map<string, TemplatePart>();
const SYSTEM_PARTS = new Map<string, TemplatePart>();
const ENV_PARTS = new Map<string, TemplatePart>();
const INTERNAL_ERROR_TEXT: TemplatePart = { kind: 'internal-error-text' };

function sharedPart(table: Map<string, TemplatePart>, kind: 'parameter' | 'intermediate' | 'system' | 'env', name: string): TemplatePart {
  let part = table.get(name);
  if (part === undefined) {
    part = { kind, name } as TemplatePart;
    // Bounded: names come from configurations, a process compiles few of them.
    if (table.size < 10_000) table.set(name, part);
  }
  return part;
}

function resolveName(ctx: CompileContext, name: string, scope: NameScope, at: Position): TemplatePart | null {
  if (name.startsWith('env:')) {
    const variable = name.slice(4);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) {
      ctx.diagnostics.report('template-syntax', at, `"\${${name}}" does not name an environment variable (letters, digits and "_")`);
      return null;
    }
    if (ctx.env[variable] === undefined && ctx.envUnused !== true) ctx.diagnostics.report('env-not-set', ctx.sources.locate(at, `\${${name}}`), variable);
    return sharedPart(ENV_PARTS, 'env', variable);
  }
  if (scope.envOnly) {
    ctx.diagnostics.report('unknown-placeholder', ctx.sources.locate(at, `\${${name}}`), name, scope.where);
    return null;
  }
  if (scope.errorAction) {
    if (name === 'internal-error-text') return INTERNAL_ERROR_TEXT;
    if (SYSTEM.has(name) && name !== 'body-sha256') return sharedPart(SYSTEM_PARTS, 'system', name);
    ctx.diagnostics.report('error-placeholder', ctx.sources.locate(at, `\${${name}}`), name);
    return null;
  }
  if (scope.parameters.has(name)) return sharedPart(PARAMETER_PARTS, 'parameter', name);
  if (scope.inputs.has(name)) return sharedPart(INTERMEDIATE_PARTS, 'intermediate', name);
  if (SYSTEM.has(name) && !(name === 'body-sha256' && scope.bodyDigest !== true)) {
    if (name === 'base-url' && scope.task === true && !ctx.publicUrlGiven) ctx.diagnostics.report('base-url-from-host', at);
    return sharedPart(SYSTEM_PARTS, 'system', name);
  }
  const where = scope.produced.has(name)
    ? `${scope.where}: it is an intermediate value, so declare it with <input-intermediate-value name="${name}"/>`
    : name === 'body-sha256'
      ? `${scope.where}: the body's digest is known only to <deduplicate key>`
      : scope.where;
  const candidates = [...scope.parameters.keys(), ...scope.inputs, ...SYSTEM_PARAMETERS];
  ctx.diagnostics.report(
    'unknown-placeholder',
    ctx.sources.locate(at, `\${${name}}`),
    name,
    where,
    scope.produced.has(name) ? undefined : ctx.suggestions.closest(name, candidates),
  );
  return null;
}
