// Small applications written to temp directories, compiled through the public entry point.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { compileApplication, type Application, type CompileOptions, type CompileResult, type Endpoint, type Template, type TemplatePart } from '../../src/compiler/index.js';
import { TASK_KINDS } from '../../src/tasks/registry.js';

const created: string[] = [];
afterAll(() => {
  for (const dir of created) rmSync(dir, { recursive: true, force: true });
});

/** Writes endpoints.xml (and sibling files, paths relative to the application directory) to a fresh directory. */
export function writeApp(endpointsXml: string, files: Record<string, string> = {}, symlinks: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'endpoint-service-compiler-'));
  created.push(dir);
  writeFileSync(path.join(dir, 'endpoints.xml'), endpointsXml);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  for (const [name, target] of Object.entries(symlinks)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    symlinkSync(target, path.join(dir, name));
  }
  return path.join(dir, 'endpoints.xml');
}

export function compileXml(endpointsXml: string, files: Record<string, string> = {}, options: Partial<CompileOptions> = {}): CompileResult {
  return compileApplication(writeApp(endpointsXml, files), { kinds: TASK_KINDS.list, mode: 'validate', env: {}, ...options });
}

/** Compiles and insists on a valid application without any diagnostic, so AST assertions never run on a half-compiled tree. */
export function compileOk(endpointsXml: string, files: Record<string, string> = {}, options: Partial<CompileOptions> = {}): Application {
  const result = compileXml(endpointsXml, files, options);
  expect(result.diagnostics.map((d) => `${d.line}:${d.column} ${d.code} ${d.message}`)).toEqual([]);
  expect(result.application).not.toBeNull();
  return result.application!;
}

/** One endpoint wrapped in a root folder. */
export function endpointOf(inner: string, files: Record<string, string> = {}, options: Partial<CompileOptions> = {}): Endpoint {
  const app = compileOk(`<endpoint-folder>\n<endpoint name="e">\n${inner}\n</endpoint>\n</endpoint-folder>\n`, files, options);
  return app.endpoints[0]!;
}

export const lit = (text: string): TemplatePart => ({ kind: 'literal', text });
export const param = (name: string): TemplatePart => ({ kind: 'parameter', name });

/** The parts of a template, which is what expansion reads. */
export function parts(t: Template | null | undefined): readonly TemplatePart[] {
  expect(t).toBeTruthy();
  return t!.parts;
}
