// Reads one of schema/*.xsd into the same kind of table as compiler-table.ts: every element in
// every place, its attributes (and which are required), its children (and which the content
// model requires at least once), whether it takes text and whether it takes any element. Only
// what these schemas use is understood (named and anonymous types, simpleContent, mixed,
// sequence, choice, groups, attribute groups, xs:any); anything else fails loudly.
import { readFileSync } from 'node:fs';
import { parseXml, type XmlElement } from '../../src/compiler/xml.js';

export interface XsdEntry {
  readonly parent: string | null;
  readonly name: string;
  readonly attributes: ReadonlyMap<string, { readonly required: boolean; readonly type: string | null }>;
  /** Child names with the fewest times the content model lets them occur. */
  readonly children: ReadonlyMap<string, number>;
  readonly text: boolean;
  readonly anyElements: boolean;
  /** Documentation of the declaration, for hover help. */
  readonly documentation: string | null;
}

export interface XsdSchema {
  readonly roots: readonly string[];
  readonly entries: readonly XsdEntry[];
  /** Named simple types' enumerations. */
  enumeration(type: string): string[];
  /** Every xs:attribute and xs:element declaration without documentation, by name. */
  readonly undocumented: readonly string[];
}

const attr = (e: XmlElement, name: string) => e.attributes.find((a) => a.name === name)?.value;
const children = (e: XmlElement, name?: string) => e.elements.filter((c) => name === undefined || c.name === name);
const documentationOf = (e: XmlElement): string | null => {
  const doc = children(e, 'xs:annotation').flatMap((a) => children(a, 'xs:documentation'))[0];
  if (doc === undefined) return null;
  return doc.children.map((c) => (c.kind === 'text' ? c.text : '')).join('').trim() || null;
};

export function readXsd(file: string): XsdSchema {
  const parsed = parseXml(readFileSync(file, 'utf8'), file);
  if (!parsed.ok) throw new Error(`${file}:${parsed.line}:${parsed.column} ${parsed.message}`);
  const schema = parsed.root;
  const named = (kind: string) => new Map(children(schema, kind).map((e) => [attr(e, 'name')!, e]));
  const complexTypes = named('xs:complexType');
  const simpleTypes = named('xs:simpleType');
  const groups = named('xs:group');
  const attributeGroups = named('xs:attributeGroup');

  const occurs = (e: XmlElement) => Number(attr(e, 'minOccurs') ?? '1');

  /** The fewest times `name` occurs in a particle. */
  const minimum = (p: XmlElement, name: string): number => {
    switch (p.name) {
      case 'xs:element':
        return attr(p, 'name') === name ? occurs(p) : 0;
      case 'xs:any':
        return 0;
      case 'xs:sequence':
        return occurs(p) * children(p).reduce((sum, c) => sum + minimum(c, name), 0);
      case 'xs:choice': {
        const each = children(p).filter((c) => c.name !== 'xs:annotation').map((c) => minimum(c, name));
        return occurs(p) * (each.length === 0 ? 0 : Math.min(...each));
      }
      case 'xs:group':
        return occurs(p) * children(groups.get(attr(p, 'ref')!)!).reduce((sum, c) => sum + minimum(c, name), 0);
      case 'xs:annotation':
        return 0;
      default:
        throw new Error(`${file}: a particle this reader does not know: <${p.name}>`);
    }
  };
  /** Element declarations and xs:any in a particle, first declaration of each name. */
  const declarations = (p: XmlElement, out: Map<string, XmlElement>, any: { found: boolean }): void => {
    if (p.name === 'xs:element') {
      if (!out.has(attr(p, 'name')!)) out.set(attr(p, 'name')!, p);
    } else if (p.name === 'xs:any') any.found = true;
    else if (p.name === 'xs:group') for (const c of children(groups.get(attr(p, 'ref')!)!)) declarations(c, out, any);
    else if (p.name === 'xs:sequence' || p.name === 'xs:choice') for (const c of children(p)) declarations(c, out, any);
    else if (p.name !== 'xs:annotation') throw new Error(`${file}: a particle this reader does not know: <${p.name}>`);
  };
  const attributesOf = (holder: XmlElement, out: Map<string, { required: boolean; type: string | null }>): void => {
    for (const c of children(holder)) {
      if (c.name === 'xs:attribute') out.set(attr(c, 'name')!, { required: attr(c, 'use') === 'required', type: attr(c, 'type') ?? null });
      else if (c.name === 'xs:attributeGroup') attributesOf(attributeGroups.get(attr(c, 'ref')!)!, out);
    }
  };

  const entries: XsdEntry[] = [];
  const undocumented: string[] = [];
  const seen = new Set<string>();
  const visit = (decl: XmlElement, parent: string | null): void => {
    const name = attr(decl, 'name')!;
    if (seen.has(`${parent}>${name}`)) return;
    seen.add(`${parent}>${name}`);
    const typeName = attr(decl, 'type');
    const complex = typeName !== undefined ? complexTypes.get(typeName) : children(decl, 'xs:complexType')[0];
    const attributes = new Map<string, { required: boolean; type: string | null }>();
    const childDecls = new Map<string, XmlElement>();
    const any = { found: false };
    let text = complex === undefined;
    const particles: XmlElement[] = [];
    if (complex !== undefined) {
      if (attr(complex, 'mixed') === 'true') text = true;
      const simpleContent = children(complex, 'xs:simpleContent')[0];
      if (simpleContent !== undefined) {
        text = true;
        for (const ext of children(simpleContent)) attributesOf(ext, attributes);
      } else {
        attributesOf(complex, attributes);
        for (const c of children(complex)) if (c.name !== 'xs:attribute' && c.name !== 'xs:attributeGroup' && c.name !== 'xs:annotation') particles.push(c);
      }
    } else if (typeName !== undefined && !typeName.startsWith('xs:') && !simpleTypes.has(typeName)) {
      throw new Error(`${file}: <${name}> has the unknown type ${typeName}`);
    }
    for (const p of particles) declarations(p, childDecls, any);
    const counts = new Map<string, number>();
    for (const child of childDecls.keys()) counts.set(child, particles.reduce((sum, p) => sum + minimum(p, child), 0));
    entries.push({ parent, name, attributes, children: counts, text, anyElements: any.found, documentation: documentationOf(decl) });
    for (const [child, childDecl] of childDecls) visit(childDecl, name);
  };
  const roots = children(schema, 'xs:element');
  for (const root of roots) visit(root, null);

  // Every declaration in the file, wherever it stands, must carry its help text.
  const walk = (e: XmlElement): void => {
    if ((e.name === 'xs:element' || e.name === 'xs:attribute') && attr(e, 'name') !== undefined && documentationOf(e) === null) {
      // A repeated declaration of the same element in one content model shares the first one's help.
      const same = e.name === 'xs:element' ? 'element' : 'attribute';
      undocumented.push(`${same} ${attr(e, 'name')} (line ${e.line})`);
    }
    for (const c of e.elements) walk(c);
  };
  walk(schema);

  return {
    roots: roots.map((r) => attr(r, 'name')!),
    entries,
    enumeration: (type) => children(children(simpleTypes.get(type)!, 'xs:restriction')[0]!, 'xs:enumeration').map((e) => attr(e, 'value')!),
    undocumented,
  };
}
