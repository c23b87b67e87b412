// <deduplicate key="…" for="…"/> on a folder or an endpoint: the endpoint's own replaces the
// folder's, as <captcha> does. The key is compiled once against the parameters in scope where it
// is written; the window is checked here, so the request path only expands the key.

import { DEFAULT_DEDUPLICATION_MS, MAX_DEDUPLICATION_MS, type Deduplication, type ParameterDeclaration } from './ast.js';
import { readElement, requireAttribute, single, type CompileContext, type ReadElement } from './context.js';
import { compileTemplate } from './templates.js';
import { formatAge, parseAge } from '../units.js';
import type { Template } from '../template/types.js';

export const DEDUPLICATION_ELEMENT = 'deduplicate';

/** The <deduplicate> in force: this element's own, else the inherited one (null: none). */
export function readDeduplication(
  ctx: CompileContext,
  read: ReadElement,
  inherited: Deduplication | null,
  parameters: ReadonlyMap<string, ParameterDeclaration>,
): Deduplication | null {
  const element = single(ctx, read, DEDUPLICATION_ELEMENT);
  if (element === undefined) return inherited;
  const r = readElement(ctx, element, { attributes: ['key', 'for'], children: [] });
  const keyAttr = requireAttribute(ctx, r, 'key');
  let key: Template | null = null;
  if (keyAttr !== undefined) {
    const scope = {
      parameters,
      inputs: new Set<string>(),
      produced: new Set<string>(),
      errorAction: false,
      envOnly: false,
      where: 'in <deduplicate key>',
      bodyDigest: true,
    };
    key = compileTemplate(ctx, keyAttr.value, 'none', scope, keyAttr.position);
    if (key !== null) {
      const varies = key.parts.some((p) => p.kind === 'parameter' || (p.kind === 'system' && VARYING_SYSTEM.has(p.name)));
      if (!varies) {
        ctx.diagnostics.report('constant-deduplication-key', keyAttr.position, keyAttr.value);
        key = null;
      } else if (key.parts.some((p) => p.kind === 'system' && p.name === 'request-id')) {
        ctx.diagnostics.report('deduplication-key-never-repeats', keyAttr.position);
      }
    }
  }
  let forMs = DEFAULT_DEDUPLICATION_MS;
  const forAttr = r.attr('for');
  if (forAttr !== undefined) {
    const ms = parseAge(forAttr.value);
    if (ms === null || ms > MAX_DEDUPLICATION_MS) {
      ctx.diagnostics.report('invalid-deduplication-window', forAttr.position, forAttr.value, formatAge(MAX_DEDUPLICATION_MS));
      return null;
    }
    forMs = ms;
  }
  if (key === null) return null;
  return { key, forMs, position: element.position };
}

/** System parameters that differ between requests; `endpoint`, `environment`, `base-url` do not tell deliveries apart. */
const VARYING_SYSTEM: ReadonlySet<string> = new Set(['request-id', 'client-ip', 'user-agent', 'body-sha256']);
