// Templates and literal parts as the compiled application keeps them (see SharedTemplates).

import type { Escaping, Template, TemplatePart } from '../template/types.js';
import { internalized, NONE } from './retained.js';

const KIND_LETTER: Readonly<Record<TemplatePart['kind'], string>> = { literal: 'l', parameter: 'p', system: 's', intermediate: 'i', env: 'e', 'internal-error-text': 'x' };

/**
 * Templates and literal parts as the application keeps them: one object, and one string, per
 * distinct text of a compile. The same URL, header, address or piece of a body recurs in endpoint
 * after endpoint; kept once each, a large application needs a fraction of the memory. Compiled
 * templates are read-only and carry no position, so sharing them changes nothing else. One per
 * compile, so that a --watch reload does not keep the texts of earlier versions.
 */
export class SharedTemplates {
  private readonly parts = new Map<string, readonly [TemplatePart]>();
  private readonly templates = new Map<string, Template>();

  /**
   * The template of `source` as written where `escaping` applies, shared by every place that
   * writes the same text and whose names resolve to the same kinds (parts are shared per text
   * and per name, so equal keys mean equal parts): a header, URL or address repeated in endpoint
   * after endpoint is one object.
   */
  template(source: string, escaping: Escaping, parts: readonly TemplatePart[]): Template {
    let key = escaping + '\u0000' + source + '\u0000';
    for (const p of parts) key += KIND_LETTER[p.kind];
    const known = this.templates.get(key);
    if (known !== undefined) return known;
    const template: Template = { source: internalized(source), escaping, parts };
    this.templates.set(key, template);
    return template;
  }

  /** The literal part of `text` (not empty). */
  part(text: string): TemplatePart {
    return this.only(text)[0]!;
  }

  /** The parts of a template that is `text` and nothing else: shared too. */
  only(text: string): readonly TemplatePart[] {
    if (text === '') return NONE;
    const known = this.parts.get(text);
    if (known !== undefined) return known;
    const kept = internalized(text);
    const parts: readonly [TemplatePart] = [{ kind: 'literal', text: kept }];
    this.parts.set(kept, parts);
    return parts;
  }
}
