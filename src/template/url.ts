// URL templates read as URLs: where their placeholders land. Two questions are asked:
//
// - per request (expandUrl): does a value make a whole path segment "." or ".."? A placeholder is
//   percent-encoded, but dots need no encoding, and every URL parser and server removes dot
//   segments (WHATWG URL, RFC 3986 5.2.4; "%2e" counts as a dot). So `/users/${id}/profile` with
//   id=".." would call `/profile`: a client could climb the upstream's path with the service's
//   credentials. Such a value is refused, naming the placeholder, before anything is sent.
// - at compile time (destinationPlaceholders): which request parameters decide the scheme, host
//   or port, so validate can point out that any client chooses where the request goes.

import { UnsafeValueError } from './escape.js';
import { expandTemplate, type ExpansionScope, type FilledRange, type PlaceholderPart } from './expand.js';
import type { Template, TemplatePart } from './types.js';

/** Schemes whose URLs the WHATWG parser reads with an authority even without `//`, and with `\` as `/`. */
const SPECIAL_SCHEMES: ReadonlySet<string> = new Set(['http', 'https', 'ws', 'wss', 'ftp', 'file']);
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;

/** A single or double dot segment, in any case and percent-encoded form ("%2e", ".%2E", …). */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * expandTemplate for a URL that will be requested (a task's `<url>`, `<response-from-url>`):
 * throws UnsafeValueError, blaming the placeholders, when a value makes a path segment "." or
 * "..". Dot segments written by the author are the configuration's and stay as written.
 */
export function expandUrl(template: Template, scope: ExpansionScope): string {
  const filled: FilledRange[] = [];
  const out = expandTemplate(template, scope, filled);
  if (filled.length > 0) checkDotSegments(out, filled);
  return out;
}

function checkDotSegments(url: string, filled: readonly FilledRange[]): void {
  const { pathStart, special } = locatePath(url);
  let pathEnd = url.length;
  for (let i = pathStart; i < url.length; i++) {
    const c = url[i];
    if (c === '?' || c === '#') {
      pathEnd = i;
      break;
    }
  }
  let segmentStart = pathStart;
  for (let i = pathStart; i <= pathEnd; i++) {
    const c = url[i];
    if (i < pathEnd && c !== '/' && !(special && c === '\\')) continue;
    if (i > segmentStart && DOT_SEGMENT.test(url.slice(segmentStart, i))) {
      const culprits = filled.filter((f) => f.start < i && f.end > segmentStart).map((f) => f.part);
      if (culprits.length > 0) {
        throw new UnsafeValueError('a value makes a URL path segment "." or "..", which would move the request to another path', {
          reason: 'makes a "." or ".." segment of a URL path',
          culprits,
        });
      }
    }
    segmentStart = i + 1;
  }
}

/** Where the path of an expanded URL starts (after scheme and authority), and whether `\` separates segments. */
function locatePath(url: string): { pathStart: number; special: boolean } {
  const scheme = SCHEME.exec(url);
  let i = scheme === null ? 0 : scheme[0].length;
  const special = scheme !== null && SPECIAL_SCHEMES.has(scheme[1]!.toLowerCase());
  if (special) {
    while (url[i] === '/' || url[i] === '\\') i++;
  } else if (url.startsWith('//', i)) {
    i += 2;
  } else {
    return { pathStart: i, special };
  }
  while (i < url.length && url[i] !== '/' && url[i] !== '?' && url[i] !== '#' && !(special && url[i] === '\\')) i++;
  return { pathStart: i, special };
}

/**
 * The placeholders for which `fromClient` is true that decide the scheme, host or port of a URL
 * template, in order; empty when those are fixed by the configuration (literal text, or a
 * trusted placeholder such as ${env:...} at the start). A placeholder other than the first is
 * percent-encoded, so it cannot add `:`, `/`, `@`, `?` or `#`: it stays where the literal text
 * around it puts it.
 */
export function destinationPlaceholders(template: Template, fromClient: (part: PlaceholderPart) => boolean): PlaceholderPart[] {
  const parts = template.parts;
  const first = parts[0];
  if (first === undefined) return [];
  if (first.kind !== 'literal') {
    // Inserted as is: it writes the whole beginning of the URL.
    return fromClient(first) ? [first] : [];
  }
  // The template with each placeholder as one private-use character, to be located in it.
  const marks: PlaceholderPart[] = [];
  let text = '';
  for (const part of parts) {
    if (part.kind === 'literal') text += part.text;
    else {
      text += String.fromCharCode(0xe000 + marks.length);
      marks.push(part);
    }
  }
  const isMark = (c: string) => c >= '\ue000' && c <= '\uf8ff';
  const blamed = new Set<PlaceholderPart>();
  const blame = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const c = text[i]!;
      if (isMark(c)) {
        const part = marks[c.charCodeAt(0) - 0xe000]!;
        if (fromClient(part)) blamed.add(part);
      }
    }
  };
  const scheme = /^([A-Za-z\ue000-\uf8ff][A-Za-z0-9+.\-\ue000-\uf8ff]*):/.exec(text);
  let i: number;
  let special: boolean;
  if (scheme !== null) {
    blame(0, scheme[1]!.length);
    i = scheme[0].length;
    // A scheme that is only partly written may turn out special: read it as one.
    special = SPECIAL_SCHEMES.has(scheme[1]!.toLowerCase()) || [...scheme[1]!].some(isMark);
    if (special) while (text[i] === '/' || text[i] === '\\') i++;
    else if (text.startsWith('//', i)) i += 2;
    else return [...blamed];
  } else if (text.startsWith('//')) {
    i = 2;
    special = false;
  } else {
    // A relative reference (a local redirect): its host is the service's own.
    return [];
  }
  const authorityStart = i;
  while (i < text.length && text[i] !== '/' && text[i] !== '?' && text[i] !== '#' && !(special && text[i] === '\\')) i++;
  // User information before the last `@` does not choose the host.
  const at = text.lastIndexOf('@', i - 1);
  blame(at >= authorityStart ? at + 1 : authorityStart, i);
  return [...blamed];
}

/** Whether a placeholder carries a value the client chose: a request parameter. */
export function isRequestParameter(part: TemplatePart): boolean {
  return part.kind === 'parameter';
}

/**
 * The placeholders of `template` whose values make `problem(url)` true: those whose value, put
 * back as a plain `a`, leaves a URL without the problem (each alone, else all of them together).
 * Empty when the URL has the problem whatever the values: then the configuration is to blame.
 * For a value in a URL's host or port (`http://${h}/x` with `h=127.0.0.1:8080`, `h=x/y#`), which
 * is percent-encoded as it stands and so makes no valid host.
 */
export function urlCulprits(template: Template, scope: ExpansionScope, problem: (url: string) => boolean): PlaceholderPart[] {
  const filled: FilledRange[] = [];
  const url = expandTemplate(template, scope, filled);
  const replaced = (ranges: readonly FilledRange[]) => {
    let out = '';
    let at = 0;
    for (const range of ranges) {
      out += url.slice(at, range.start) + 'a';
      at = range.end;
    }
    return out + url.slice(at);
  };
  const culprits = filled.filter((range) => !problem(replaced([range]))).map((range) => range.part);
  if (culprits.length > 0) return culprits;
  return filled.length > 0 && !problem(replaced(filled)) ? filled.map((range) => range.part) : [];
}
