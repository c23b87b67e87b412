// The OpenEndpoints example application (shared/compat, beside the repository) and what the
// compat tests derive from its text: where each unsupported feature is used, and a copy with
// those features (and the endpoints that only make sense with them) removed.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../cli/helpers.js';

export const corpusDir = path.resolve(repoRoot, '../shared/compat/openendpoints-example');
export const strippedFixtureDir = path.join(repoRoot, 'fixtures/openendpoints-stripped');

/**
 * The corpus is a real OpenEndpoints application kept beside the repository, not in it: a bare
 * clone has none, and its tests are skipped with one line saying so. CI (.ci/run) refuses to
 * run without it, so there a missing corpus is a broken checkout, never a silent skip.
 */
export const corpusPresent = existsSync(path.join(corpusDir, 'endpoints.xml'));

/** Recognised OpenEndpoints features that endpoint-service refuses by name (docs/diagnostics.md, `unsupported-feature`). */
export const UNSUPPORTED_ELEMENTS = [
  'response-transformation',
  'ooxml-parameter-expansion',
  'parameter-transformation',
  'body-transformation',
  'attachment-transformation',
  'attachment-ooxml-parameter-expansion',
];
export const UNSUPPORTED_CLASSES = ['CreateShortLinkToEndpointTask', 'RequestLogExpressionCaptureTask'];

/** Endpoints kept in the stripped copy: they work without any unsupported feature. */
export const KEPT_ENDPOINTS = ['send-email', 'redirect', 'http-request', 'from-static', 'from-url'];

/** The text with comments blanked out (newlines kept), so offsets and lines stay the same. */
export function withoutComments(text: string): string {
  return text.replace(/<!--[\s\S]*?-->/g, (c) => c.replace(/[^\n]/g, ' '));
}

export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

export interface FeatureUse {
  readonly name: string;
  readonly line: number;
  readonly offset: number;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Every use of an unsupported feature, found in the text: an unsupported element's start tag,
 * an unsupported task class (at its class attribute) and an xslt-file attribute, but none inside
 * an unsupported element (those are covered by the element's own report).
 */
export function unsupportedUses(xml: string): FeatureUse[] {
  const text = withoutComments(xml);
  const uses: FeatureUse[] = [];
  const element = new RegExp(`<(${UNSUPPORTED_ELEMENTS.map(escape).join('|')})(?=[\\s/>])`, 'g');
  for (const m of text.matchAll(element)) uses.push({ name: m[1]!, offset: m.index, line: lineAt(text, m.index) });
  const klass = new RegExp(`\\bclass\\s*=\\s*["'](?:endpoints\\.task\\.)?(${UNSUPPORTED_CLASSES.join('|')})["']`, 'g');
  for (const m of text.matchAll(klass)) uses.push({ name: m[1]!, offset: m.index, line: lineAt(text, m.index) });
  for (const m of text.matchAll(/\sxslt-file\s*=/g)) uses.push({ name: 'xslt-file', offset: m.index + 1, line: lineAt(text, m.index + 1) });
  const inside = elementRanges(text, UNSUPPORTED_ELEMENTS);
  return uses
    .filter((u) => !inside.some((r) => u.offset > r.start && u.offset < r.end))
    .sort((a, b) => a.offset - b.offset);
}

/** [start, end) of each element with one of these names (start tag to its end tag or "/>"). */
export function elementRanges(text: string, names: readonly string[]): { name: string; start: number; end: number }[] {
  const ranges: { name: string; start: number; end: number }[] = [];
  for (const name of names) {
    const open = new RegExp(`<${escape(name)}(?=[\\s/>])`, 'g');
    for (const m of text.matchAll(open)) {
      const tagEnd = tagEndAt(text, m.index);
      if (text[tagEnd - 2] === '/') ranges.push({ name, start: m.index, end: tagEnd });
      else {
        // These elements never nest in themselves in OpenEndpoints configurations.
        const close = text.indexOf(`</${name}>`, tagEnd);
        if (close < 0) throw new Error(`<${name}> at line ${lineAt(text, m.index)} is not closed`);
        ranges.push({ name, start: m.index, end: close + name.length + 3 });
      }
    }
  }
  return ranges;
}

/** Offset just after the '>' that ends the tag starting at `start` (quoted values may hold '>'). */
function tagEndAt(text: string, start: number): number {
  let quote: string | null = null;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return i + 1;
  }
  throw new Error('unterminated tag');
}

/** Each <endpoint> with its name and range. */
export function endpoints(text: string): { name: string; start: number; end: number }[] {
  return elementRanges(text, ['endpoint']).map((r) => ({ ...r, name: /\bname\s*=\s*"([^"]*)"/.exec(text.slice(r.start, r.end))![1]! }));
}

/** Each <task> with its class and range. */
export function tasks(text: string): { klass: string; start: number; end: number }[] {
  return elementRanges(text, ['task']).map((r) => ({ ...r, klass: /\bclass\s*=\s*"([^"]*)"/.exec(text.slice(r.start, r.end))?.[1] ?? '' }));
}

/**
 * endpoints.xml without the unsupported features: every endpoint not in KEPT_ENDPOINTS, every
 * task of an unsupported class and every unsupported element go, with the lines they leave blank.
 */
export function strip(xml: string): { text: string; removedEndpoints: string[] } {
  // Ranges come from the text with comments blanked (same offsets); the comments themselves stay.
  const text = xml;
  const scan = withoutComments(text);
  const cut: { start: number; end: number }[] = [];
  const removedEndpoints: string[] = [];
  for (const e of endpoints(scan)) {
    if (!KEPT_ENDPOINTS.includes(e.name)) {
      cut.push(e);
      removedEndpoints.push(e.name);
    }
  }
  for (const t of tasks(scan)) if (UNSUPPORTED_CLASSES.some((c) => t.klass.endsWith(c))) cut.push(t);
  cut.push(...elementRanges(scan, UNSUPPORTED_ELEMENTS));
  // Outermost ranges only, cut from the end so earlier offsets stay valid.
  const outer = cut
    .sort((a, b) => a.start - b.start || b.end - a.end)
    .filter((r, i, all) => !all.slice(0, i).some((o) => o.start <= r.start && o.end >= r.end));
  let out = text;
  for (const r of outer.reverse()) out = out.slice(0, r.start) + out.slice(r.end);
  // A removed element leaves its indentation and, after it, a comment or a blank line.
  out = out
    .split('\n')
    .filter((line) => line.trim() !== '')
    .join('\n');
  return { text: out + '\n', removedEndpoints };
}

/** Writes the stripped application (with security.xml, email-sending-configuration.xml, static/) into `dir`. */
export function writeStrippedApp(dir: string, endpointsXml: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'endpoints.xml'), endpointsXml);
  for (const name of ['security.xml', 'email-sending-configuration.xml']) copy(path.join(corpusDir, name), path.join(dir, name));
  copyTree(path.join(corpusDir, 'static'), path.join(dir, 'static'));
}

function copy(from: string, to: string): void {
  copyFileSync(from, to);
  // The corpus is read-only; the copy must stay writable so temp dirs can be removed.
  chmodSync(to, 0o644);
}

function copyTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.isDirectory()) copyTree(path.join(from, entry.name), path.join(to, entry.name));
    else copy(path.join(from, entry.name), path.join(to, entry.name));
  }
}
