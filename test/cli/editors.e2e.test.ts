// docs/editors.md tried for real where it can be without an editor: its problem matcher reads
// real validate output exactly as --format json reports it, its VS Code associations name the
// schemas the package ships, and its xsi:noNamespaceSchemaLocation snippets name them too (the
// schemas themselves are validated with xmllint in test/language/schemas-on-fixtures.test.ts and
// test/cli/init.e2e.test.ts).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertBuilt, repoRoot, run } from './helpers.js';

const DOC = readFileSync(path.join(repoRoot, 'docs/editors.md'), 'utf8');
const blocks = (language: string) => [...DOC.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);

interface Diagnostic {
  file: string;
  line: number;
  column: number;
  severity: string;
  code: string;
  message: string;
}

describe('docs/editors.md', () => {
  it('its problem matcher reads the text format as --format json reports it', async () => {
    assertBuilt();
    const matcher = blocks('json')
      .map((b) => JSON.parse(b) as { problemMatcher?: { pattern: Record<string, string | number>[] }[] })
      .find((b) => b.problemMatcher !== undefined)!;
    const pattern = matcher.problemMatcher![0]!.pattern[0]!;
    const regexp = new RegExp(pattern.regexp as string);
    // Errors and a warning, in endpoints.xml and in a settings file beside it.
    const files = [
      'fixtures/invalid/unknown-element/endpoints.xml',
      'fixtures/invalid/invalid-value--settings/endpoints.xml',
      'fixtures/invalid/env-not-set/endpoints.xml',
    ];
    const text = await run(['validate', ...files]);
    const json = JSON.parse((await run(['validate', '--format', 'json', ...files])).stdout) as { diagnostics: Diagnostic[] };
    expect(json.diagnostics.map((d) => d.severity)).toEqual(expect.arrayContaining(['error', 'warning']));
    const read = text.stdout
      .split('\n')
      .map((line) => regexp.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({
        file: m[pattern.file as number],
        line: Number(m[pattern.line as number]),
        column: Number(m[pattern.column as number]),
        severity: m[pattern.severity as number],
        code: m[pattern.code as number],
        message: m[pattern.message as number],
      }));
    expect(read).toEqual(json.diagnostics.map(({ file, line, column, severity, code, message }) => ({ file, line, column, severity, code, message })));
  });

  it('its VS Code associations name the three files and the schemas the package ships', () => {
    const settings = blocks('json')
      .map((b) => JSON.parse(b) as { 'xml.fileAssociations'?: { pattern: string; systemId: string }[] })
      .find((b) => b['xml.fileAssociations'] !== undefined)!;
    const associations = settings['xml.fileAssociations']!;
    expect(associations.map((a) => a.pattern)).toEqual(['**/endpoints.xml', '**/email-sending-configuration.xml', '**/security.xml']);
    for (const a of associations) {
      const shipped = a.systemId.replace('${workspaceFolder}/node_modules/endpoint-service/', '');
      expect(existsSync(path.join(repoRoot, shipped)), shipped).toBe(true);
      expect(path.basename(shipped)).toBe(path.basename(a.pattern).replace('.xml', '.xsd'));
    }
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { files: string[] };
    expect(pkg.files).toContain('schema');
  });

  it('its xsi:noNamespaceSchemaLocation snippets name the schema of their root element', () => {
    const snippets = blocks('xml').filter((b) => b.includes('xsi:noNamespaceSchemaLocation'));
    expect(snippets).toHaveLength(3);
    for (const snippet of snippets) {
      const root = /^<([a-z-]+)/.exec(snippet)![1]!;
      const location = /xsi:noNamespaceSchemaLocation="([^"]+)"/.exec(snippet)![1]!;
      expect(location).toBe(`schema/${root === 'endpoint-folder' ? 'endpoints' : root}.xsd`);
      expect(existsSync(path.join(repoRoot, location))).toBe(true);
    }
  });
});
