// Parameter binding (runtime.md, "Parameters"), shared by serve and dry-run so a simulated
// request binds exactly as a real one.

import type { Endpoint } from '../compiler/ast.js';
import type { SystemParameter } from '../template/types.js';

/** Values as received, by name, in arrival order. */
export type RawParameters = ReadonlyMap<string, readonly string[]>;

export type Environment = 'live' | 'preview';
export const RESERVED_PARAMETERS: ReadonlySet<string> = new Set(['hash', 'environment', 'debug']);

export type BindResult =
  | {
      readonly ok: true;
      /** Declared parameters: sent values joined with the separator, else the default. */
      readonly parameters: ReadonlyMap<string, string>;
      /** Names sent but not declared (nor reserved): ignored. */
      readonly ignored: readonly string[];
    }
  | { readonly ok: false; readonly detail: string };

export function bindParameters(endpoint: Endpoint, raw: RawParameters): BindResult {
  const parameters = new Map<string, string>();
  for (const declaration of endpoint.parameters) {
    const sent = raw.get(declaration.name);
    if (sent !== undefined && sent.length > 0) {
      parameters.set(declaration.name, sent.length === 1 ? sent[0]! : sent.join(endpoint.separator));
    } else if (declaration.defaultValue !== null) {
      parameters.set(declaration.name, declaration.defaultValue);
    } else {
      return { ok: false, detail: `missing required parameter "${declaration.name}"` };
    }
  }
  return { ok: true, parameters, ignored: ignoredParameters(endpoint, raw) };
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
}

export function systemValues(endpoint: Endpoint, facts: RequestFacts): Record<SystemParameter, string> {
  return {
    'request-id': facts.requestId,
    endpoint: endpoint.name,
    environment: facts.environment,
    'client-ip': facts.clientIp,
    'user-agent': facts.userAgent,
    'base-url': facts.baseUrl,
  };
}
