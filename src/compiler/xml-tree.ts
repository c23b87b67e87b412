// The parsed document in a few typed arrays: elements, attributes and text are numbers (offsets
// into the source, lines, columns, links between nodes). A configuration of tens of megabytes has
// hundreds of thousands of nodes, and as objects they would all live until the whole file is
// compiled: the garbage collector would copy every one of them, more than once. Buffers of
// numbers it never copies. The compiler reads the tree through XmlElement views made on demand;
// it lets them go element by element, so they die young, which costs the collector nothing.
// Typed arrays instead of objects, and the figures: docs/performance.md, "XML tree".

import type { Position } from '../position.js';

export interface XmlAttribute {
  readonly name: string;
  readonly value: string;
  readonly line: number;
  readonly column: number;
  /** A new object per read: only what the AST keeps is made. */
  readonly position: Position;
}

export interface XmlText {
  readonly kind: 'text';
  readonly text: string;
  readonly cdata: boolean;
  /** Where a CDATA section's content starts (after `<![CDATA[`), for an element without child elements: bodies parsed from it report positions in the file. */
  readonly position: Position | undefined;
}

export interface XmlElement {
  readonly kind: 'element';
  readonly name: string;
  /** Made anew on each read (views of the document). */
  readonly attributes: readonly XmlAttribute[];
  /** Made anew on each read (views of the document). */
  readonly children: readonly XmlNode[];
  /** The child elements only (no views of the text between them), made anew on each read. */
  readonly elements: readonly XmlElement[];
  /** Whether some direct text or CDATA holds more than whitespace. */
  hasText(): boolean;
  readonly line: number;
  readonly column: number;
  /** A new object per read, as for attributes. */
  readonly position: Position;
}

export type XmlNode = XmlElement | XmlText;

// Elements without attributes or children share these (views are read-only).
const NO_ATTRIBUTES: readonly XmlAttribute[] = Object.freeze([]);
const NO_CHILDREN: readonly XmlNode[] = Object.freeze([]);
const NO_ELEMENTS: readonly XmlElement[] = Object.freeze([]);

/** `end` of a value or text whose decoded form (references, line ends) is kept as a string. */
const DECODED = -1;

function grown(a: Int32Array, size: number): Int32Array {
  if (size <= a.length) return a;
  const b = new Int32Array(Math.max(size, a.length * 2));
  b.set(a);
  return b;
}

/**
 * Written by the parser in document order, read by views. A child reference is an element's
 * index, or the bitwise complement (~) of a text's index.
 */
export class XmlDocument {
  // Elements.
  private elementCount = 0;
  private readonly names: string[] = [];
  private elementLine: Int32Array;
  private elementColumn: Int32Array;
  private attributeStart: Int32Array;
  private attributeEnd: Int32Array;
  private childStart: Int32Array;
  private childEnd: Int32Array;
  // Attributes.
  private attributeCount = 0;
  private readonly attributeNames: string[] = [];
  private valueStart: Int32Array;
  private valueEnd: Int32Array;
  private attributeLine: Int32Array;
  private attributeColumn: Int32Array;
  private readonly decodedValues = new Map<number, string>();
  /**
   * Names of the attributes of the start tag being read, with their lines, once it has more than
   * a handful: a hostile tag with a hundred thousand attributes must not take quadratic time to
   * check for duplicates. null until needed, and again at each start tag.
   */
  private namesOfTag: Map<string, number> | null = null;
  // Texts and CDATA sections (line and column only matter for CDATA).
  private textCount = 0;
  private textStart: Int32Array;
  private textEnd: Int32Array;
  private textLine: Int32Array;
  private textColumn: Int32Array;
  private readonly decodedTexts = new Map<number, string>();
  /** 1 for a CDATA section. */
  private textCdata: Uint8Array;
  // Children, element by element, in the order their end tags come.
  private refCount = 0;
  private refs: Int32Array;

  constructor(
    readonly source: string,
    readonly file: string,
    /** Applied to each value and text read: detaches what the AST may keep from the document. */
    private readonly keep: (text: string) => string,
  ) {
    // About one element per 60 characters in a configuration; the arrays double when needed.
    const elements = Math.max(16, source.length >> 6);
    this.elementLine = new Int32Array(elements);
    this.elementColumn = new Int32Array(elements);
    this.attributeStart = new Int32Array(elements);
    this.attributeEnd = new Int32Array(elements);
    this.childStart = new Int32Array(elements);
    this.childEnd = new Int32Array(elements);
    this.valueStart = new Int32Array(elements);
    this.valueEnd = new Int32Array(elements);
    this.attributeLine = new Int32Array(elements);
    this.attributeColumn = new Int32Array(elements);
    this.textStart = new Int32Array(elements);
    this.textEnd = new Int32Array(elements);
    this.textLine = new Int32Array(elements);
    this.textColumn = new Int32Array(elements);
    this.textCdata = new Uint8Array(elements);
    this.refs = new Int32Array(elements * 2);
  }

  // --- Written by the parser -------------------------------------------------------------

  /** A start tag: the element's index. Its attributes follow, then closeStartTag. */
  openElement(name: string, line: number, column: number): number {
    const e = this.elementCount++;
    if (e >= this.elementLine.length) {
      const size = e + 1;
      this.elementLine = grown(this.elementLine, size);
      this.elementColumn = grown(this.elementColumn, size);
      this.attributeStart = grown(this.attributeStart, size);
      this.attributeEnd = grown(this.attributeEnd, size);
      this.childStart = grown(this.childStart, size);
      this.childEnd = grown(this.childEnd, size);
    }
    this.names.push(name);
    this.namesOfTag = null;
    this.elementLine[e] = line;
    this.elementColumn[e] = column;
    this.attributeStart[e] = this.attributeCount;
    this.attributeEnd[e] = this.attributeCount;
    return e;
  }

  /** An attribute of the start tag being read: its value is source[start, end), or `decoded`. */
  addAttribute(name: string, start: number, end: number, decoded: string | null, line: number, column: number): void {
    const a = this.attributeCount++;
    if (a >= this.valueStart.length) {
      const size = a + 1;
      this.valueStart = grown(this.valueStart, size);
      this.valueEnd = grown(this.valueEnd, size);
      this.attributeLine = grown(this.attributeLine, size);
      this.attributeColumn = grown(this.attributeColumn, size);
    }
    this.attributeNames.push(name);
    if (this.namesOfTag !== null && !this.namesOfTag.has(name)) this.namesOfTag.set(name, line);
    this.valueStart[a] = start;
    this.valueEnd[a] = decoded === null ? end : DECODED;
    if (decoded !== null) this.decodedValues.set(a, decoded);
    this.attributeLine[a] = line;
    this.attributeColumn[a] = column;
  }

  closeStartTag(element: number): void {
    this.attributeEnd[element] = this.attributeCount;
  }

  /** The line of an attribute named `name` read so far in the start tag of `element` (the one being read), or -1. */
  attributeLineOf(element: number, name: string): number {
    const start = this.attributeStart[element]!;
    if (this.namesOfTag === null) {
      if (this.attributeCount - start <= 16) {
        for (let a = start; a < this.attributeCount; a++) if (this.attributeNames[a] === name) return this.attributeLine[a]!;
        return -1;
      }
      const names = new Map<string, number>();
      for (let a = start; a < this.attributeCount; a++) if (!names.has(this.attributeNames[a]!)) names.set(this.attributeNames[a]!, this.attributeLine[a]!);
      this.namesOfTag = names;
    }
    return this.namesOfTag.get(name) ?? -1;
  }

  /** Text or a CDATA section: source[start, end), or `decoded`. Returns its child reference. */
  addText(start: number, end: number, decoded: string | null, cdata: boolean, line: number, column: number): number {
    const t = this.textCount++;
    if (t >= this.textStart.length) {
      const size = t + 1;
      this.textStart = grown(this.textStart, size);
      this.textEnd = grown(this.textEnd, size);
      this.textLine = grown(this.textLine, size);
      this.textColumn = grown(this.textColumn, size);
      if (size > this.textCdata.length) {
        const larger = new Uint8Array(this.textStart.length);
        larger.set(this.textCdata);
        this.textCdata = larger;
      }
    }
    this.textStart[t] = start;
    this.textEnd[t] = decoded === null ? end : DECODED;
    if (decoded !== null) this.decodedTexts.set(t, decoded);
    if (cdata) {
      this.textCdata[t] = 1;
      this.textLine[t] = line;
      this.textColumn[t] = column;
    }
    return ~t;
  }

  /** The end tag of `element`: its children are `pending[from, to)`. */
  setChildren(element: number, pending: Int32Array, from: number, to: number): void {
    const start = this.refCount;
    const end = start + to - from;
    if (end > this.refs.length) this.refs = grown(this.refs, end);
    // A loop rather than set(subarray()): most elements have a handful of children, and a
    // subarray is an object made per call.
    const refs = this.refs;
    for (let k = from, r = start; k < to; k++, r++) refs[r] = pending[k]!;
    this.refCount = end;
    this.childStart[element] = start;
    this.childEnd[element] = end;
  }

  name(element: number): string {
    return this.names[element]!;
  }

  line(element: number): number {
    return this.elementLine[element]!;
  }

  column(element: number): number {
    return this.elementColumn[element]!;
  }

  // --- Read through views ----------------------------------------------------------------

  element(e: number): XmlElement {
    return new ElementView(this, e, this.names[e]!, this.elementLine[e]!, this.elementColumn[e]!);
  }

  attributesOf(e: number): readonly XmlAttribute[] {
    const start = this.attributeStart[e]!;
    const end = this.attributeEnd[e]!;
    if (start === end) return NO_ATTRIBUTES;
    const out: XmlAttribute[] = new Array(end - start);
    for (let a = start; a < end; a++) {
      const valueEnd = this.valueEnd[a]!;
      // Detached from the document: the AST keeps many of these (see internalized).
      const value = this.keep(valueEnd === DECODED ? this.decodedValues.get(a)! : this.source.slice(this.valueStart[a]!, valueEnd));
      out[a - start] = new AttributeView(this.attributeNames[a]!, value, this.file, this.attributeLine[a]!, this.attributeColumn[a]!);
    }
    return out;
  }

  childrenOf(e: number): readonly XmlNode[] {
    const start = this.childStart[e]!;
    const end = this.childEnd[e]!;
    if (start === end) return NO_CHILDREN;
    const refs = this.refs;
    // A CDATA section is the whole content only of an element without child elements: only then
    // does it carry a position (an inline body parsed from it reports positions in the file).
    let mixed = false;
    for (let k = start; k < end; k++) {
      if (refs[k]! >= 0) {
        mixed = true;
        break;
      }
    }
    const out: XmlNode[] = new Array(end - start);
    for (let k = start; k < end; k++) {
      const ref = refs[k]!;
      out[k - start] = ref >= 0 ? this.element(ref) : new TextView(this, ~ref, mixed);
    }
    return out;
  }

  elementsOf(e: number): readonly XmlElement[] {
    let out: XmlElement[] | null = null;
    const refs = this.refs;
    for (let k = this.childStart[e]!, end = this.childEnd[e]!; k < end; k++) {
      const ref = refs[k]!;
      if (ref < 0) continue;
      if (out === null) out = [this.element(ref)];
      else out.push(this.element(ref));
    }
    return out ?? NO_ELEMENTS;
  }

  hasText(e: number): boolean {
    const refs = this.refs;
    const s = this.source;
    for (let k = this.childStart[e]!, end = this.childEnd[e]!; k < end; k++) {
      const ref = refs[k]!;
      if (ref >= 0) continue;
      const t = ~ref;
      const textEnd = this.textEnd[t]!;
      if (textEnd === DECODED) {
        if (this.decodedTexts.get(t)!.trim() !== '') return true;
        continue;
      }
      // Indentation, mostly: ASCII whitespace is skipped here; anything else is decided by
      // trim(), whose idea of whitespace (Unicode's) is the one the text is held to.
      for (let i = this.textStart[t]!; i < textEnd; i++) {
        const c = s.charCodeAt(i);
        if (c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d) continue;
        if (c < 0x80 || s.slice(i, textEnd).trim() !== '') return true;
        break;
      }
    }
    return false;
  }

  textContent(t: number): string {
    return this.keep(this.rawText(t));
  }

  /** A slice of the document: only for what is read and let go, or detached once whole. */
  private rawText(t: number): string {
    const end = this.textEnd[t]!;
    return end === DECODED ? this.decodedTexts.get(t)! : this.source.slice(this.textStart[t]!, end);
  }

  isCdata(t: number): boolean {
    return this.textCdata[t] === 1;
  }

  /** Where a CDATA section's content starts. */
  textPosition(t: number): Position {
    return { file: this.file, line: this.textLine[t]!, column: this.textColumn[t]! };
  }

  /** The direct text and CDATA of an element, concatenated, without making views. */
  textOf(e: number): string {
    let out = '';
    const refs = this.refs;
    for (let k = this.childStart[e]!, end = this.childEnd[e]!; k < end; k++) {
      const ref = refs[k]!;
      if (ref >= 0) continue;
      out += this.rawText(~ref);
    }
    return this.keep(out);
  }
}

class ElementView implements XmlElement {
  readonly kind = 'element';
  constructor(
    readonly document: XmlDocument,
    readonly index: number,
    readonly name: string,
    readonly line: number,
    readonly column: number,
  ) {}
  get attributes(): readonly XmlAttribute[] {
    return this.document.attributesOf(this.index);
  }
  get children(): readonly XmlNode[] {
    return this.document.childrenOf(this.index);
  }
  get elements(): readonly XmlElement[] {
    return this.document.elementsOf(this.index);
  }
  hasText(): boolean {
    return this.document.hasText(this.index);
  }
  get position(): Position {
    return { file: this.document.file, line: this.line, column: this.column };
  }
}

/** Text is read only where the compiler looks at it (most is indentation between elements). */
class TextView implements XmlText {
  readonly kind = 'text';
  constructor(
    private readonly document: XmlDocument,
    private readonly index: number,
    /** Beside child elements: a CDATA section there is not the whole content. */
    private readonly mixed: boolean,
  ) {}
  get text(): string {
    return this.document.textContent(this.index);
  }
  get cdata(): boolean {
    return this.document.isCdata(this.index);
  }
  get position(): Position | undefined {
    return this.mixed || !this.document.isCdata(this.index) ? undefined : this.document.textPosition(this.index);
  }
}

class AttributeView implements XmlAttribute {
  constructor(
    readonly name: string,
    readonly value: string,
    readonly file: string,
    readonly line: number,
    readonly column: number,
  ) {}
  get position(): Position {
    return { file: this.file, line: this.line, column: this.column };
  }
}

/** Concatenated text and CDATA of an element's direct children. */
export function textOf(element: XmlElement): string {
  // Every XmlElement is a view of a document.
  const view = element as ElementView;
  return view.document.textOf(view.index);
}
