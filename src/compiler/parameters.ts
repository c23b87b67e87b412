// <parameter> of an <endpoint-folder> or <endpoint>: its name, its source (by its name, a JSONPath
// into a JSON body, or a request header; docs/language.md, "<parameter>"), its default-value and
// its input rules. Decided and checked once, here; the runtime only reads what this compiles
// (runtime/sources.ts, runtime/parameters.ts). The rules' check of a value, which the runtime
// makes on every request as well, is parameter-rules.ts.

import type { ParameterDeclaration, ParameterFormat, ParameterRules, ParameterSource } from './ast.js';
import { readElement, requireAttribute, type CompileContext, type ReadElement } from './context.js';
import { authorJsonPath } from './json-path.js';
import { PARAMETER_FORMATS, ruleViolation } from './parameter-rules.js';
import { authorRegex } from './regex.js';
import { internalized } from './retained.js';
import { SYSTEM_PARAMETERS } from '../template/types.js';
import type { XmlElement } from './xml.js';

const PARAMETER_NAME = /^[A-Za-z0-9_.-]+$/;
/** A parameter or an intermediate value of one of these names is reported: the name is taken. */
export const SYSTEM: ReadonlySet<string> = new Set(SYSTEM_PARAMETERS);
const PARAMETER_SHAPE = { attributes: ['name', 'jsonpath', 'header', 'default-value', 'pattern', 'max-length', 'format'], children: [] };

const BY_NAME: ParameterSource = Object.freeze({ kind: 'name' });

/** RFC 9110 field-name: a token. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * The parameters in scope below an element: those `inherited` from the folders above, with the
 * element's own <parameter>s added or overriding, in declaration order.
 */
export function declareParameters(
  ctx: CompileContext,
  elements: readonly XmlElement[],
  inherited: ReadonlyMap<string, ParameterDeclaration>,
): Map<string, ParameterDeclaration> {
  const merged = new Map(inherited);
  const here = new Map<string, ParameterDeclaration>();
  for (const el of elements) {
    const declaration = compileParameter(ctx, el, here);
    if (declaration === null) continue;
    here.set(declaration.name, declaration);
    // Re-inserting moves an overridden parameter to its new place in declaration order.
    merged.delete(declaration.name);
    merged.set(declaration.name, declaration);
  }
  return merged;
}

/** One <parameter>; null after reporting why it declares nothing. `here`: those declared before it on the same element. */
function compileParameter(ctx: CompileContext, el: XmlElement, here: ReadonlyMap<string, ParameterDeclaration>): ParameterDeclaration | null {
  const r = readElement(ctx, el, PARAMETER_SHAPE);
  const name = requireAttribute(ctx, r, 'name');
  if (!name) return null;
  if (!PARAMETER_NAME.test(name.value)) {
    ctx.diagnostics.report('invalid-parameter-name', name.position, name.value);
    return null;
  }
  const first = here.get(name.value);
  if (first) {
    ctx.diagnostics.report('duplicate-parameter', el.position, name.value, first.position.line);
    return null;
  }
  const def = r.attr('default-value');
  if (def?.value.includes('${')) ctx.diagnostics.report('placeholder-not-allowed', def.position, 'default-value (it is a literal)');
  if (SYSTEM.has(name.value)) ctx.diagnostics.report('parameter-shadows-system', name.position, name.value);
  // A bad source is reported; read by name meanwhile, so its uses are not reported as well.
  const source = parameterSource(ctx, r) ?? BY_NAME;
  const compiled = compileRules(ctx, r);
  if (!compiled.ok) return null;
  const { rules } = compiled;
  if (rules !== null && def !== undefined && def.value !== '') {
    const violation = ruleViolation(rules, def.value);
    if (violation !== null) ctx.diagnostics.report('invalid-default-value', def.position, name.value, violation);
  }
  return { name: name.value, source, defaultValue: def?.value ?? null, rules, position: el.position };
}

/** The parameter's source; undefined after reporting why it has none. */
function parameterSource(ctx: CompileContext, read: ReadElement): ParameterSource | undefined {
  const jsonpath = read.attr('jsonpath');
  const header = read.attr('header');
  if (jsonpath === undefined && header === undefined) return BY_NAME;
  if (jsonpath !== undefined && header !== undefined) {
    // At the one written second: the first is what the author meant first.
    const second =
      jsonpath.position.line > header.position.line || (jsonpath.position.line === header.position.line && jsonpath.position.column > header.position.column)
        ? jsonpath
        : header;
    ctx.diagnostics.report('conflicting-parameter-source', second.position);
    return undefined;
  }
  if (header !== undefined) {
    if (!HEADER_NAME.test(header.value)) {
      ctx.diagnostics.report('invalid-header-name', header.position, header.value);
      return undefined;
    }
    return { kind: 'header', header: internalized(header.value.toLowerCase()) };
  }
  const query = authorJsonPath(ctx, jsonpath!);
  if (query === null) return undefined;
  return { kind: 'jsonpath', path: internalized(jsonpath!.value), query };
}

/** The input rules of a <parameter> (null: it has none), or not ok after a bad one was reported. */
type CompiledRules = { readonly ok: true; readonly rules: ParameterRules | null } | { readonly ok: false };

/** A rule of CompiledRules: its value (null: not given), or undefined after reporting why it is bad. */
type Rule<T> = T | null | undefined;

function compileRules(ctx: CompileContext, read: ReadElement): CompiledRules {
  if (!read.attr('pattern') && !read.attr('max-length') && !read.attr('format')) return { ok: true, rules: null };
  // Each is checked, so that every bad one is reported at once.
  const pattern = patternRule(ctx, read);
  const maxLength = maxLengthRule(ctx, read);
  const format = formatRule(ctx, read);
  if (pattern === undefined || maxLength === undefined || format === undefined) return { ok: false };
  return { ok: true, rules: { pattern, maxLength, format } };
}

function patternRule(ctx: CompileContext, read: ReadElement): Rule<ParameterRules['pattern']> {
  const attr = read.attr('pattern');
  if (!attr) return null;
  return authorRegex(ctx, attr) ?? undefined;
}

function maxLengthRule(ctx: CompileContext, read: ReadElement): Rule<number> {
  const attr = read.attr('max-length');
  if (!attr) return null;
  if (/^[1-9]\d{0,8}$/.test(attr.value)) return Number(attr.value);
  ctx.diagnostics.report('invalid-value', attr.position, 'max-length', attr.value, 'a whole number greater than 0');
  return undefined;
}

function formatRule(ctx: CompileContext, read: ReadElement): Rule<ParameterFormat> {
  const attr = read.attr('format');
  if (!attr) return null;
  if ((PARAMETER_FORMATS as readonly string[]).includes(attr.value)) return attr.value as ParameterFormat;
  const suggestion = ctx.suggestions.closest(attr.value, PARAMETER_FORMATS);
  const formats = PARAMETER_FORMATS.map((f) => `"${f}"`).join(', ');
  ctx.diagnostics.report(
    'invalid-value',
    attr.position,
    'format',
    attr.value,
    `${formats}${suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`}`,
  );
  return undefined;
}
