// Templates and literal parts as the compiled application keeps them (see SharedTemplates).

import type { Escaping, Template, TemplatePart } from '../template/types.js';
import { internalized, NONE } from './retained.js';

/** Parts of templates of one text: equal when their kinds are (literal parts and names are shared). */
function sameKinds(a: readonly TemplatePart[], b: readonly TemplatePart[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.kind !== b[i]!.kind) return false;
  return true;
}

/**
 * Templates and literal parts as the application keeps them: one object, and one string, per
 * distinct text of a compile. The same URL, header, address or piece of a body recurs in endpoint
 * after endpoint; kept once each, a large application needs a fraction of the memory. Compiled
 * templates are read-only and carry no position, so sharing them changes nothing else. One per
 * compile, so that a --watch reload does not keep the texts of earlier versions.
 */
export class SharedTemplates {
  private readonly parts = new Map<string, readonly [TemplatePart]>();
  private readonly templates = new Map<string, Template[]>();

  /** `sharing` off (validate, which keeps nothing it compiles): each is made as asked, at no extra cost. */
  constructor(private readonly sharing: boolean) {}

  /**
   * The template of `source` as written where `escaping` applies, shared by every place that
   * writes the same text and whose names resolve to the same kinds (parts are shared per text
   * and per name, so equal keys mean equal parts): a header, URL or address repeated in endpoint
   * after endpoint is one object.
   */
  template(source: string, escaping: Escaping, parts: readonly TemplatePart[]): Template {
    if (!this.sharing) return { source, escaping, parts };
    // Keyed by the source itself (its hash is kept on the string, and an internalized one has
    // it already); the few templates of one text are told apart by escaping and kinds.
    const candidates = this.templates.get(source);
    if (candidates !== undefined) for (const t of candidates) if (t.escaping === escaping && sameKinds(t.parts, parts)) return t;
    const template: Template = { source: internalized(source), escaping, parts };
    if (candidates === undefined) this.templates.set(template.source, [template]);
    else candidates.push(template);
    return template;
  }

  /** The literal part of `text` (not empty). */
  part(text: string): TemplatePart {
    return this.only(text)[0]!;
  }

  /** The parts of a template that is `text` and nothing else: shared too. */
  only(text: string): readonly TemplatePart[] {
    if (text === '') return NONE;
    if (!this.sharing) return [{ kind: 'literal', text }];
    const known = this.parts.get(text);
    if (known !== undefined) return known;
    const kept = internalized(text);
    const parts: readonly [TemplatePart] = [{ kind: 'literal', text: kept }];
    this.parts.set(kept, parts);
    return parts;
  }
}
