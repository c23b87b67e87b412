// Parameter binding, shared by serve and dry-run so a simulated request binds exactly as a
// real one (docs/dry-run.md, "Simulating a request").

import type { Endpoint, ParameterRules } from '../compiler/ast.js';
import { ruleViolation } from '../compiler/parameter-rules.js';
import type { SystemParameter } from '../template/types.js';
import { sourcedValues, type RequestSources } from './sources.js';
import { MAX_PARAMETER_VALUES } from './json-values.js';

/** Values as received, by name, in arrival order. */
export type RawParameters = ReadonlyMap<string, readonly string[]>;

export type Environment = 'live' | 'preview';
export const RESERVED_PARAMETERS: ReadonlySet<string> = new Set(['hash', 'environment', 'debug']);

/** One parameter a request got wrong; `detail` says what, never the value. */
export interface ParameterError {
  readonly parameter: string;
  readonly detail: string;
}

/** The detail of a required parameter that was not sent (or sent blank); the HTML error page asks a visitor to fill it in. */
export function missingParameterDetail(name: string): string {
  return `missing required parameter "${name}"`;
}

export type BindResult =
  | {
      readonly ok: true;
      /** Declared parameters: sent values joined with the separator, else the default. */
      readonly parameters: ReadonlyMap<string, string>;
      /** Names sent but not declared (nor reserved): ignored. */
      readonly ignored: readonly string[];
    }
  /** Every parameter that is missing or breaks its rules, in declaration order. */
  | { readonly ok: false; readonly detail: string; readonly errors: readonly ParameterError[] };

/**
 * `sources`: the request's headers and JSON body, for parameters declared with a source; null
 * when every parameter is bound by name from `raw` (the values a forward or a queued job hands on).
 */
export function bindParameters(endpoint: Endpoint, raw: RawParameters, sources: RequestSources | null): BindResult {
  const parameters = new Map<string, string>();
  let errors: ParameterError[] | null = null;
  for (const declaration of endpoint.parameters) {
    const sourced = sources === null || declaration.source.kind === 'name' ? raw.get(declaration.name) : sourcedValues(declaration, sources);
    if (sourced !== undefined && 'problem' in sourced) {
      (errors ??= []).push({ parameter: declaration.name, detail: `parameter "${declaration.name}" ${sourced.problem}` });
      continue;
    }
    const sent = sourced;
    // A body's member array is cut after MAX_PARAMETER_VALUES + 1 values (json-values.ts): more is refused, however many.
    if (sent !== undefined && sent.length > MAX_PARAMETER_VALUES) {
      (errors ??= []).push({ parameter: declaration.name, detail: `parameter "${declaration.name}" is sent more than ${MAX_PARAMETER_VALUES} times` });
      continue;
    }
    const required = declaration.defaultValue === null;
    // A required parameter sent blank is missing: browsers send every empty text field.
    if (sent !== undefined && sent.length > 0 && !(required && allBlank(sent))) {
      const value = sent.length === 1 ? sent[0]! : sent.join(endpoint.separator);
      const problem =
        sent.length > 1 && readsIntoKey(endpoint, declaration.name)
          ? `takes one value and was sent ${sent.length} times (it makes the <deduplicate> key)`
          : declaration.rules === null
            ? null
            : violation(declaration.rules, sent.length, value);
      if (problem !== null) (errors ??= []).push({ parameter: declaration.name, detail: `parameter "${declaration.name}" ${problem}` });
      else parameters.set(declaration.name, value);
    } else if (!required) {
      parameters.set(declaration.name, declaration.defaultValue!);
    } else {
      (errors ??= []).push({ parameter: declaration.name, detail: missingParameterDetail(declaration.name) });
    }
  }
  if (errors !== null) return { ok: false, detail: summarize(errors), errors };
  return { ok: true, parameters, ignored: ignoredParameters(endpoint, raw) };
}

const keyParameters = new WeakMap<Endpoint, ReadonlySet<string>>();

/**
 * Whether the endpoint's <deduplicate> key reads the parameter. Such a parameter takes one value:
 * joined, `a` and `b` sent as two headers would make the key of one header `a||b`, and two
 * deliveries would share it.
 */
function readsIntoKey(endpoint: Endpoint, name: string): boolean {
  if (endpoint.deduplicate === null) return false;
  let names = keyParameters.get(endpoint);
  if (names === undefined) {
    names = new Set(endpoint.deduplicate.key.parts.flatMap((part) => (part.kind === 'parameter' ? [part.name] : [])));
    keyParameters.set(endpoint, names);
  }
  return names.has(name);
}

/**
 * What people cannot see: whitespace (U+0085 and U+00A0 included), control and format
 * characters (U+200B, U+2060, U+00AD, U+FEFF, bidi marks) and the fillers that render as
 * nothing. A required value made only of these counts as not given.
 */
const INVISIBLE_ONLY = /^[\s\p{Cc}\p{Cf}\p{Z}\u034f\u115f\u1160\u2800\u3164\uffa0]*$/u;

function allBlank(values: readonly string[]): boolean {
  for (const value of values) if (!INVISIBLE_ONLY.test(value)) return false;
  return true;
}

/**
 * The rules hold for what templates receive: the values as joined. A `format` or `pattern`
 * describes one value, which two joined with the separator never are, so such a parameter takes
 * one; `max-length` bounds the joined text. A blank value is requiredness' business, not a rule's.
 */
const ASCII_BLANK = /^[ \t\n\f\r]*$/;

function violation(rules: ParameterRules, count: number, value: string): string | null {
  if (count > 1 && (rules.format !== null || rules.pattern !== null)) return `takes one value and was sent ${count} times`;
  // What a person leaves in a form field: nothing, or spaces, tabs and line ends (ASCII
  // whitespace, as HTML's own). Not String.prototype.trim's whitespace: a value of only U+00A0 or
  // U+0085 passed every pattern and reached the tasks; it is checked like any other value.
  if (ASCII_BLANK.test(value)) return null;
  return ruleViolation(rules, value);
}

/** One problem is said as it is; several are counted and named. */
function summarize(errors: readonly ParameterError[]): string {
  if (errors.length === 1) return errors[0]!.detail;
  return `${errors.length} parameters are missing or not valid: ${errors.map((e) => `"${e.parameter}"`).join(', ')}`;
}

/** Names sent but neither declared by the endpoint nor reserved: ignored, whether binding succeeds or not. */
export function ignoredParameters(endpoint: Endpoint, raw: RawParameters): string[] {
  const ignored: string[] = [];
  for (const name of raw.keys()) {
    if (!endpoint.parametersByName.has(name) && !RESERVED_PARAMETERS.has(name)) ignored.push(name);
  }
  return ignored;
}

/** `environment` is `live` (default) or `preview`, exactly; anything else is a 400. */
export function parseEnvironment(raw: RawParameters): { ok: true; environment: Environment } | { ok: false; detail: string } {
  const values = raw.get('environment');
  if (values === undefined || values.length === 0) return { ok: true, environment: 'live' };
  if (values.length === 1 && (values[0] === 'live' || values[0] === 'preview')) return { ok: true, environment: values[0] };
  return { ok: false, detail: `parameter "environment" must be "live" or "preview"` };
}

export interface RequestFacts {
  readonly requestId: string;
  readonly environment: Environment;
  readonly clientIp: string;
  readonly userAgent: string;
  readonly baseUrl: string;
  /** SHA-256 (hex) of the body's bytes as received: on an endpoint with <deduplicate>, else absent. */
  readonly bodySha256?: string;
}

export function systemValues(endpoint: Endpoint, facts: RequestFacts): Record<SystemParameter, string> {
  return {
    'request-id': facts.requestId,
    endpoint: endpoint.name,
    environment: facts.environment,
    'client-ip': facts.clientIp,
    'user-agent': facts.userAgent,
    'base-url': facts.baseUrl,
    'body-sha256': facts.bodySha256 ?? '',
  };
}
