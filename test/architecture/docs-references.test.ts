// Comments in src/ point to the documentation as `docs/<file>.md, "Heading"` (or README.md,
// SECURITY.md): the reader who follows one must find that heading. A heading renamed or a
// section removed fails here, naming the comment that points to it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../cli/helpers.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** `docs/x.md, "Heading"`, the heading possibly on the next comment line. */
const REFERENCE = /((?:docs\/)?[A-Za-z0-9_-]+\.md),\s*(?:\/\/\s*|\*\s*)?"([^"\n]+)"/g;

export interface DocReference {
  readonly from: string;
  readonly doc: string;
  readonly heading: string;
}

export function referencesIn(from: string, text: string): DocReference[] {
  return [...text.matchAll(REFERENCE)].map((m) => ({ from: `${from}:${text.slice(0, m.index).split('\n').length}`, doc: m[1]!, heading: m[2]! }));
}

const headingsCache = new Map<string, string[]>();
function headingsOf(doc: string): string[] | null {
  const file = path.join(repoRoot, doc);
  if (!existsSync(file)) return null;
  let headings = headingsCache.get(file);
  if (headings === undefined) {
    headings = readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line) => {
        const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
        return m === null ? [] : [m[1]!];
      });
    headingsCache.set(file, headings);
  }
  return headings;
}

/**
 * The heading is named in full, or by its start up to a ":", " (" or " —" (`"P8"` for "P8 —
 * concurrent uploads"); code spans count by their text (`"<parameter>"` for "`<parameter>`").
 */
export function resolves(reference: string, headings: readonly string[]): boolean {
  const plain = (text: string) => text.replace(/`/g, '');
  const wanted = plain(reference);
  return headings.map(plain).some((h) => h === wanted || [':', ' (', ' —'].some((end) => h.startsWith(wanted + end)));
}

const references = sourceFiles(path.join(repoRoot, 'src')).flatMap((file) => referencesIn(path.relative(repoRoot, file), readFileSync(file, 'utf8')));

describe('references from src/ to the documentation', () => {
  it('finds them (else this test checks nothing)', () => {
    expect(references.length).toBeGreaterThan(20);
  });

  it('each names a heading of a document the repository has', () => {
    const broken = references
      .filter((r) => {
        const headings = headingsOf(r.doc);
        return headings === null || !resolves(r.heading, headings);
      })
      .map((r) => `${r.from}: ${r.doc}, "${r.heading}"`);
    expect(broken).toEqual([]);
  });

  it('reads a reference split over two comment lines, and tells a heading from a near miss', () => {
    expect(referencesIn('a.ts', '// see docs/behaviour.md,\n// "Processes" for why').map((r) => r.heading)).toEqual(['Processes']);
    expect(resolves('P8', ['P8: 200 uploads at once'])).toBe(true);
    expect(resolves('P8', ['P80: something else'])).toBe(false);
    expect(resolves('Traces', ['Tracing'])).toBe(false);
    expect(resolves('<parameter>', ['`<parameter>`'])).toBe(true);
  });
});
