// Comments in src/ point to the documentation as `docs/<file>.md, "Heading"` (or README.md,
// SECURITY.md): the reader who follows one must find that heading. A heading renamed or a
// section removed fails here, naming the comment that points to it.
//
// They point to files too: a document (`docs/behaviour`, `README.md`), a module
// (`server/body/whole.ts`, `./sources.ts`), a test (`test/queue/seal.test.ts`). Each must name a
// file of this repository: a file renamed, or a pointer to notes that live beside the
// repository (`../shared/`, which is not part of the product), fails here too.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
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
  return [...text.matchAll(REFERENCE)].map((m) => ({ from: `${from}:${lineAt(text, m.index)}`, doc: m[1]!, heading: m[2]! }));
}

function lineAt(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
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

/** A file named in a comment (or, for a document, anywhere in the text: a message may point to one too). */
export interface FilePointer {
  readonly from: string;
  /** The file it was found in, relative to the repository: pointers are resolved from its folder too. */
  readonly file: string;
  readonly kind: 'doc' | 'module';
  readonly target: string;
}

// Not inside a longer path, a URL or a pattern: `https://…/docs/x`, `src/tasks/<kind>/compile.ts`, `*.e2e.test.ts`.
const NOT_AFTER = String.raw`(?<![\w./<>*@:-])`;
/** `docs/behaviour`, `docs/behaviour.md`. */
const DOCS_POINTER = new RegExp(String.raw`${NOT_AFTER}docs\/[\w.-]*[\w-]`, 'g');
/** `README.md`, `bench/README.md`, `../shared/spec/cli.md`. */
const MD_POINTER = new RegExp(String.raw`${NOT_AFTER}(?:\.{1,2}\/)*(?:[\w.-]+\/)*[\w.-]*\w\.md\b`, 'g');
/** `server/body/whole.ts`, `./sources.ts`, `test/queue/seal.test.ts`; not `lib.d.ts`'s kind of name, which no one points to. */
const TS_POINTER = new RegExp(String.raw`${NOT_AFTER}(?:\.{1,2}\/)*(?:[\w.-]+\/)*[\w.-]*\w\.ts\b(?!\/)`, 'g');

/** The comments of a TypeScript source with their offsets, found by TypeScript's parser: `//` in a string, a URL or a regex is no comment. */
export function commentsOf(text: string): { readonly start: number; readonly text: string }[] {
  const source = ts.createSourceFile('comments.ts', text, ts.ScriptTarget.Latest, true);
  const found = new Map<number, string>();
  const collect = (ranges: ts.CommentRange[] | undefined) => {
    for (const range of ranges ?? []) found.set(range.pos, text.slice(range.pos, range.end));
  };
  const visit = (node: ts.Node) => {
    collect(ts.getLeadingCommentRanges(text, node.pos));
    collect(ts.getTrailingCommentRanges(text, node.end));
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...found].sort(([a], [b]) => a - b).map(([start, comment]) => ({ start, text: comment }));
}

export function pointersIn(file: string, text: string): FilePointer[] {
  const pointers: FilePointer[] = [];
  const add = (kind: FilePointer['kind'], target: string, offset: number) => pointers.push({ from: `${file}:${lineAt(text, offset)}`, file, kind, target });
  for (const m of text.matchAll(DOCS_POINTER)) add('doc', m[0], m.index);
  for (const m of text.matchAll(MD_POINTER)) if (!m[0].startsWith('docs/')) add('doc', m[0], m.index);
  for (const comment of commentsOf(text)) {
    for (const m of comment.text.matchAll(TS_POINTER)) add('module', m[0], comment.start + m.index);
  }
  return pointers;
}

function isFileInRepository(candidate: string): boolean {
  const relative = path.relative(repoRoot, candidate);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return false;
  return existsSync(candidate) && statSync(candidate).isFile();
}

/**
 * Where a pointer leads: a document under docs/ (`.md` may be left out), at the top of the
 * repository or beside the file; a module under src/, beside the file or from the top
 * (`test/…`); `./` and `../` from the file's folder only. Null when nothing in the repository is
 * there, which is also the answer for anything outside it, whether it exists or not.
 */
export function resolvePointer(pointer: FilePointer): string | null {
  const folder = path.join(repoRoot, path.dirname(pointer.file));
  const target = pointer.target;
  const candidates: string[] = [];
  if (target.startsWith('./') || target.startsWith('../')) candidates.push(path.resolve(folder, target));
  else if (pointer.kind === 'doc' && target.startsWith('docs/')) {
    candidates.push(path.join(repoRoot, target), path.join(repoRoot, `${target}.md`));
  } else if (pointer.kind === 'doc') {
    candidates.push(path.join(repoRoot, target), path.join(repoRoot, 'docs', target), path.join(folder, target));
  } else {
    candidates.push(path.join(repoRoot, 'src', target), path.join(folder, target), path.join(repoRoot, target));
  }
  const found = candidates.find(isFileInRepository);
  return found === undefined ? null : path.relative(repoRoot, found);
}

const files = sourceFiles(path.join(repoRoot, 'src')).map((file) => ({ file: path.relative(repoRoot, file), text: readFileSync(file, 'utf8') }));
const references = files.flatMap(({ file, text }) => referencesIn(file, text));
const pointers = files.flatMap(({ file, text }) => pointersIn(file, text));

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

describe('files named in src/', () => {
  it('finds documents and modules (else this test checks nothing)', () => {
    expect(pointers.filter((p) => p.kind === 'doc').length).toBeGreaterThan(50);
    expect(pointers.filter((p) => p.kind === 'module').length).toBeGreaterThan(100);
  });

  it('each names a file of this repository', () => {
    const broken = pointers.filter((p) => resolvePointer(p) === null).map((p) => `${p.from}: ${p.target}`);
    expect(broken).toEqual([]);
  });

  it('fails on a made-up pointer of every form, and on one that leaves the repository', () => {
    const text = [
      '// The body is read by server/body.ts (docs/hooks: "Signatures"), see primary.ts,',
      "// ./nowhere.ts, runtime/pipelines.ts and cli.md's usage errors; the notes beside the",
      '// repository: ../../../shared/spec/cli.md, ../shared/spec/webhooks.md, shared/design/durable-tasks.md.',
      "const message = 'See docs/nowhere.md.';",
    ].join('\n');
    const found = pointersIn('src/server/made-up.ts', text);
    expect(found.filter((p) => resolvePointer(p) === null).map((p) => `${p.kind} ${p.target}`)).toEqual([
      'doc docs/hooks',
      'doc docs/nowhere.md',
      'doc cli.md',
      'doc ../../../shared/spec/cli.md',
      'doc ../shared/spec/webhooks.md',
      'doc shared/design/durable-tasks.md',
      'module server/body.ts',
      'module primary.ts',
      'module ./nowhere.ts',
      'module runtime/pipelines.ts',
    ]);
    expect(found).toHaveLength(10);
  });

  it('resolves a pointer from src/, from its own folder and from the top, and reads only comments for modules', () => {
    const text = [
      '// runtime/pipeline.ts, ./http.ts, lifecycle.ts, ../runtime/sources.ts, test/queue/seal.test.ts,',
      '// docs/behaviour, docs/language.md, README.md, bench/README.md; not src/tasks/<kind>/compile.ts,',
      '// *.e2e.test.ts, https://example.com/docs/api or https://example.com/x/README.md.',
      "const pattern = /\\/\\/ server\\/body.ts/; const url = 'http://a.example/x.ts';",
    ].join('\n');
    const found = pointersIn('src/server/made-up.ts', text);
    expect(found.map((p) => [p.target, resolvePointer(p)])).toEqual([
      ['docs/behaviour', 'docs/behaviour.md'],
      ['docs/language.md', 'docs/language.md'],
      ['README.md', 'README.md'],
      ['bench/README.md', 'bench/README.md'],
      ['runtime/pipeline.ts', 'src/runtime/pipeline.ts'],
      ['./http.ts', 'src/server/http.ts'],
      ['lifecycle.ts', 'src/server/lifecycle.ts'],
      ['../runtime/sources.ts', 'src/runtime/sources.ts'],
      ['test/queue/seal.test.ts', 'test/queue/seal.test.ts'],
    ]);
  });
});
