// docs/architecture.md, "Layers": imports only point down, and no files import each other in a
// circle. Read from the source text, type-only imports included: a type that climbs up is a
// dependency that climbs up.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../cli/helpers.js';

const SRC = path.join(repoRoot, 'src');
/** Lowest first. Files directly in src/ are the ground floor: they import nothing of the project. */
const LAYERS = ['', 'template', 'webhooks', 'compiler', 'tasks', 'runtime', 'queue', 'deliveries', 'admin', 'server', 'cli'] as const;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const spec = (match[1] ?? match[2])!;
    found.push(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
  }
  return found;
}

function layerOf(file: string): number {
  const relative = path.relative(SRC, file);
  const top = relative.includes(path.sep) ? relative.split(path.sep)[0]! : '';
  const index = (LAYERS as readonly string[]).indexOf(top);
  if (index < 0) throw new Error(`src/${relative} is in no layer: add its folder to LAYERS and to docs/architecture.md`);
  return index;
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const rel = (f: string) => path.relative(repoRoot, f);

describe('the layers of src/', () => {
  it('finds the source and its imports (else this test checks nothing)', () => {
    expect(files.length).toBeGreaterThan(50);
    expect([...graph.values()].flat().length).toBeGreaterThan(150);
  });

  it('imports only point down or sideways within a layer', () => {
    const upward: string[] = [];
    for (const [file, imports] of graph) {
      for (const target of imports) {
        if (layerOf(target) > layerOf(file)) upward.push(`${rel(file)} -> ${rel(target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('the ground floor imports nothing of the project', () => {
    const ground = files.filter((f) => layerOf(f) === 0);
    expect(ground.flatMap((f) => graph.get(f)!.map((t) => `${rel(f)} -> ${rel(t)}`))).toEqual([]);
  });

  it('no files import each other in a circle', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (file: string): void => {
      state.set(file, 'open');
      stack.push(file);
      for (const target of graph.get(file) ?? []) {
        if (!graph.has(target)) continue;
        const s = state.get(target);
        if (s === 'open') cycles.push([...stack.slice(stack.indexOf(target)), target].map(rel).join(' -> '));
        else if (s === undefined) visit(target);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of files) if (!state.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });
});
