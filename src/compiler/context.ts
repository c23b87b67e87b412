// What every element compiler shares: diagnostics, the command's mode, the environment, the
// application's folders; plus the generic element reader that reports unknown and
// unsupported names in one place.

import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Position } from '../position.js';
import { type Diagnostics } from './diagnostics.js';
import type { SourceTexts } from './locate.js';
import type { SharedTemplates } from './shared-templates.js';
import type { SharedTaskGraphs } from './task-graph.js';
import type { CompileMode } from './mode.js';
import type { Suggestions } from './suggest.js';
import type { XmlAttribute, XmlElement } from './xml.js';

export interface CompileContext {
  readonly diagnostics: Diagnostics;
  readonly mode: CompileMode;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** CompileOptions.publicUrlGiven. */
  readonly publicUrlGiven: boolean;
  /** CompileOptions.smtpUrlGiven: the connection settings of email-sending-configuration.xml are not used. */
  readonly smtpUrlGiven: boolean;
  /**
   * Set while compiling values that this run does not use (the connection settings that
   * --smtp-url replaces): their ${env:…} need not be set here, so env-not-set is not reported.
   */
  readonly envUnused?: boolean;
  /** The text of each configuration file read, to point a diagnostic at part of a value. */
  readonly sources: SourceTexts;
  /** endpoints.xml as given; referenced files are named relative to its folder as given. */
  readonly file: string;
  readonly directory: string;
  readonly staticDirectory: string;
  /** Path as shown in diagnostics for a file in the application directory. */
  displayPath(name: string): string;
  /** How static/ is named in diagnostics: displayPath('static') + '/'. */
  readonly staticLabel: string;
  /** Results of resolveInside, per compile: thousands of tasks often share one attachment. */
  readonly fileChecks: Map<string, FileCheck>;
  /** "Did you mean" for this run, within its budget. */
  readonly suggestions: Suggestions;
  /** Every <endpoint name>, valid or not, for uniqueness and forward targets. */
  readonly endpointNames: { readonly name: string; readonly position: Position }[];
  /** Every <forward-to-endpoint>, for targets and cycles across endpoints. */
  readonly forwards: { readonly from: string; readonly target: string; readonly position: Position }[];
  /** Task graphs, shared within the compile. */
  readonly graphs: SharedTaskGraphs;
  /** Templates and literal parts, shared within the compile. */
  readonly shared: SharedTemplates;
  /** CompileOptions.onElementRead. */
  readonly onElementRead: ((element: XmlElement, shape: ElementShape) => void) | undefined;
}

/** OpenEndpoints elements recognised and refused by name (no follow-on diagnostics inside). */
export const UNSUPPORTED_ELEMENTS: ReadonlySet<string> = new Set([
  'response-transformation',
  'ooxml-parameter-expansion',
  'parameter-transformation',
  'body-transformation',
  'attachment-transformation',
  'attachment-ooxml-parameter-expansion',
]);

/**
 * What to write instead of each OpenEndpoints feature this service does not implement, by element,
 * attribute or task class name; null where nothing here does the same job. The unsupported-feature
 * diagnostic says it, and docs/migrating-from-openendpoints.md explains each.
 */
export const UNSUPPORTED_INSTEAD: Readonly<Record<string, string | null>> = {
  'response-transformation':
    'write the response with <response-body> (a template answered as JSON, XML, HTML or text by its content-type), or answer with <response-from-url> what another service renders',
  'ooxml-parameter-expansion': 'answer with <response-from-url> a document that another service fills in',
  'parameter-transformation':
    'use the parameters as they are sent: default-value on <parameter>, conditions (if="..." equals="...") on <success> and <task>, and values fetched from another API by an HttpRequest task with <output-intermediate-value>',
  'body-transformation': 'write the mail text in a <body> (inline, or from a file with src="...", as content-type="text/plain" or "text/html")',
  'attachment-transformation': 'attach a prepared file from static/ with <attachment-static>; mail attachments are not generated here',
  'attachment-ooxml-parameter-expansion': 'attach a prepared file from static/ with <attachment-static>; mail attachments are not generated here',
  'xslt-file': 'write the body inline in <json-body> or <xml-body>, whose placeholders are escaped for JSON or XML',
  CreateShortLinkToEndpointTask: 'call a link-shortening service with an HttpRequest task and read the link with <output-intermediate-value>',
  RequestLogExpressionCaptureTask: 'remove the task: each request is logged with its request id, endpoint, status and duration, but no value of your own',
  'mx-address': 'name an SMTP server (a relay) in <server>, or pass --smtp-url',
};

export interface ElementShape {
  readonly attributes: readonly string[];
  readonly children: readonly string[];
  /** Text allowed directly inside (a value or template). */
  readonly text?: boolean;
}

export interface ReadElement {
  readonly element: XmlElement;
  /** Every attribute, in document order. */
  readonly attributes: readonly XmlAttribute[];
  attr(name: string): XmlAttribute | undefined;
  /** Known children by name, in document order. */
  children(name: string): readonly XmlElement[];
  /** Known children in document order. */
  readonly known: readonly XmlElement[];
  /** Unsupported OpenEndpoints children that were reported. */
  readonly unsupported: readonly XmlElement[];
}

const isNamespaceAttribute = (name: string) => name === 'xmlns' || name.startsWith('xmlns:') || name.startsWith('xsi:');

// Most lookups find nothing (an optional child left out): they share one empty list.
const NONE: readonly XmlElement[] = Object.freeze([]);

// A class rather than an object of closures: one allocation per element read, and tens of
// thousands of elements are read in a large application.
class ReadElementImpl implements ReadElement {
  constructor(
    readonly element: XmlElement,
    /** Read once: each read of element.attributes makes new views. */
    readonly attributes: readonly XmlAttribute[],
    readonly known: readonly XmlElement[],
    readonly unsupported: readonly XmlElement[],
  ) {}

  attr(name: string): XmlAttribute | undefined {
    for (const a of this.attributes) if (a.name === name) return a;
    return undefined;
  }

  children(name: string): readonly XmlElement[] {
    let found: XmlElement[] | null = null;
    for (const child of this.known) {
      if (child.name !== name) continue;
      if (found === null) found = [child];
      else found.push(child);
    }
    return found ?? NONE;
  }
}

/**
 * Reports unknown attributes and children (with suggestions), unsupported OpenEndpoints
 * features and stray text, and gives typed access to the rest.
 */
export function readElement(ctx: CompileContext, element: XmlElement, shape: ElementShape): ReadElement {
  if (ctx.onElementRead !== undefined) ctx.onElementRead(element, shape);
  const attributes = element.attributes;
  for (const a of attributes) {
    if (shape.attributes.includes(a.name) || isNamespaceAttribute(a.name)) continue;
    if (a.name === 'xslt-file') {
      // On a body it was an XSLT making that body; elsewhere a transformation of a response.
      const body = element.name === 'json-body' || element.name === 'xml-body';
      const instead = body
        ? UNSUPPORTED_INSTEAD['xslt-file']!
        : 'remove the attribute: an answer is passed on as it comes (to write a response of your own, use <response-body>)';
      ctx.diagnostics.report('unsupported-feature', a.position, `The attribute xslt-file on <${element.name}>`, instead);
    } else ctx.diagnostics.report('unknown-attribute', a.position, a.name, element.name, ctx.suggestions.closest(a.name, shape.attributes));
  }
  let known: XmlElement[] | null = null;
  let unsupported: XmlElement[] | null = null;
  for (const child of element.elements) {
    if (shape.children.includes(child.name)) {
      if (known === null) known = [child];
      else known.push(child);
    } else if (UNSUPPORTED_ELEMENTS.has(child.name)) {
      if (unsupported === null) unsupported = [child];
      else unsupported.push(child);
      ctx.diagnostics.report('unsupported-feature', child.position, `<${child.name}>`, UNSUPPORTED_INSTEAD[child.name] ?? null);
    } else ctx.diagnostics.report('unknown-element', child.position, child.name, element.name, ctx.suggestions.closest(child.name, shape.children));
  }
  if (!shape.text && element.hasText()) ctx.diagnostics.report('unexpected-text', element.position, element.name);
  return new ReadElementImpl(element, attributes, known ?? NONE, unsupported ?? NONE);
}

/** The single allowed child of that name; later ones are reported as duplicates. */
export function single(ctx: CompileContext, read: ReadElement, name: string): XmlElement | undefined {
  const all = read.children(name);
  for (let k = 1; k < all.length; k++) ctx.diagnostics.report('duplicate-element', all[k]!.position, name, read.element.name, all[0]!.position.line);
  return all[0];
}

export function requireAttribute(ctx: CompileContext, read: ReadElement, name: string): XmlAttribute | undefined {
  const a = read.attr(name);
  if (!a) ctx.diagnostics.report('missing-attribute', read.element.position, name, read.element.name);
  return a;
}

export function parseBooleanAttribute(ctx: CompileContext, a: XmlAttribute | undefined, element: string): boolean | null {
  if (!a) return null;
  if (a.value === 'true') return true;
  if (a.value === 'false') return false;
  ctx.diagnostics.report('invalid-value', a.position, `${a.name} on <${element}>`, a.value, '"true" or "false"');
  return null;
}

/**
 * Resolves a path relative to `folder`, which it must not leave (no "..", no absolute path,
 * no symlink out), and checks that it exists as a file. null after reporting.
 */
export function resolveInside(ctx: CompileContext, folder: string, folderLabel: string, relative: string, at: Position): string | null {
  const key = `${folder}\u0000${relative}`;
  let check = ctx.fileChecks.get(key);
  if (check === undefined) {
    const target = path.resolve(folder, relative);
    check = { verdict: checkInside(folder, relative, target), target };
    ctx.fileChecks.set(key, check);
  }
  if (check.verdict === 'outside') ctx.diagnostics.report('file-outside-folder', at, relative, folderLabel);
  else if (check.verdict === 'missing') ctx.diagnostics.report('file-not-found', at, relative, folderLabel);
  return check.verdict === 'ok' ? check.target : null;
}

export interface FileCheck {
  readonly verdict: 'ok' | 'missing' | 'outside';
  /** The resolved path, one string for every reference to the file. */
  readonly target: string;
}

/** A path relative to the folder leaves it when it is the folder itself, absolute, or starts with a ".." segment (not a name like "..notes.txt"). */
function leavesFolder(relative: string): boolean {
  return relative === '' || relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
}

function checkInside(folder: string, relative: string, target: string): 'ok' | 'missing' | 'outside' {
  if (path.isAbsolute(relative) || relative.includes('\0')) return 'outside';
  const lexical = path.relative(folder, target);
  if (leavesFolder(lexical)) return 'outside';
  let real: string;
  let realFolder: string;
  try {
    real = realpathSync(target);
    realFolder = realpathSync(folder);
  } catch {
    return 'missing';
  }
  const rel = path.relative(realFolder, real);
  if (leavesFolder(rel)) return 'outside';
  try {
    return statSync(real).isFile() ? 'ok' : 'missing';
  } catch {
    return 'missing';
  }
}
