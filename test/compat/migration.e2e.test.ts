// docs/migrating-from-openendpoints.md, its worked example held to reality: each "Before" block
// is the OpenEndpoints example application as it is (the corpus beside the repository), and
// validate names a replacement and this guide for each of its unsupported features; each
// "After" block is part of the migrated application at the end of the guide, which validate
// reads with no error and the schema accepts.
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { validateXML } from 'xmllint-wasm';
import { afterAll, describe, expect, it } from 'vitest';
import { assertBuilt, removeDir, repoRoot, run, tempApp } from '../cli/helpers.js';
import { corpusDir, corpusPresent, strippedFixtureDir } from './openendpoints.js';

const GUIDE = readFileSync(path.join(repoRoot, 'docs/migrating-from-openendpoints.md'), 'utf8');
const example = GUIDE.slice(GUIDE.indexOf('## Worked example'));

/** The ```xml blocks of the worked example, each with the line before it (a paragraph's last, or the fence of the block before). */
function xmlBlocks(text: string): { intro: string; text: string }[] {
  const out: { intro: string; text: string }[] = [];
  const all = text.split('\n');
  for (let k = 0; k < all.length; k++) {
    if (all[k] !== '```xml') continue;
    let i = k - 1;
    while (i >= 0 && all[i]!.trim() === '') i--;
    const end = all.indexOf('```', k + 1);
    out.push({ intro: all[i] ?? '', text: all.slice(k + 1, end).join('\n') });
    k = end;
  }
  return out;
}
const blocks = xmlBlocks(example);
const befores = blocks.filter((b) => b.intro === 'Before:' || b.intro === 'and its forward target:');
const result = blocks.at(-1)!.text;
const afters = blocks.filter((b) => b !== blocks.at(-1) && !befores.includes(b));

/** Lines without their indentation and trailing blanks: a block is indented as it stands in its guide. */
const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
const containsLines = (whole: string, part: string) => {
  const w = lines(whole).join('\n');
  return w.includes(lines(part).join('\n'));
};

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

describe('docs/migrating-from-openendpoints.md, worked example', () => {
  it('shows three endpoints before and after, and the whole result', () => {
    expect(example.match(/^### `[a-z0-9-]+`/gm)).toHaveLength(3);
    expect(befores).toHaveLength(4);
    expect(afters).toHaveLength(4);
    expect(result.startsWith('<endpoint-folder')).toBe(true);
  });

  it('each "after" block is part of the migrated application', () => {
    for (const a of afters) expect(containsLines(result, a.text), a.text.split('\n')[0]).toBe(true);
  });

  it('the migrated application: validate reports no error, and the schema accepts it', async () => {
    assertBuilt();
    const dir = tempApp({ 'endpoints.xml': result });
    dirs.push(dir);
    for (const name of ['security.xml', 'email-sending-configuration.xml']) copyFileSync(path.join(strippedFixtureDir, name), path.join(dir, name));
    mkdirSync(path.join(dir, 'static/static-subdirectory'), { recursive: true });
    copyFileSync(path.join(strippedFixtureDir, 'static/static-subdirectory/spheres.png'), path.join(dir, 'static/static-subdirectory/spheres.png'));
    const r = await run(['validate', '--format', 'json', path.join(dir, 'endpoints.xml')], { env: { DOCUMENTS_URL: 'https://documents.example.com' } });
    expect(JSON.parse(r.stdout)).toMatchObject({ valid: true, errorCount: 0, warningCount: 0 });
    const unset = await run(['validate', path.join(dir, 'endpoints.xml')]);
    expect(unset.exitCode).toBe(0);
    expect(unset.stdout.trimEnd().split('\n').at(-1)).toBe('0 errors, 1 warning');
    const schema = readFileSync(path.join(repoRoot, 'schema/endpoints.xsd'), 'utf8');
    const lint = await validateXML({ xml: [{ fileName: 'endpoints.xml', contents: result }], schema: [schema] });
    expect(lint.errors.map((e) => e.rawMessage)).toEqual([]);
  });

  describe.skipIf(!corpusPresent)('against the OpenEndpoints corpus', () => {
    const corpus = corpusPresent ? readFileSync(path.join(corpusDir, 'endpoints.xml'), 'utf8') : '';

    it('each "before" block is the corpus as it is', () => {
      for (const b of befores) expect(containsLines(corpus, b.text), b.text.split('\n')[0]).toBe(true);
    });

    it('validate reports as the guide says: only unsupported features as errors, each naming what to write instead and the guide', async () => {
      const r = await run(['validate', '--format', 'json', path.join(corpusDir, 'endpoints.xml')]);
      const report = JSON.parse(r.stdout) as {
        errorCount: number;
        warningCount: number;
        diagnostics: { code: string; severity: string; message: string; line: number }[];
      };
      expect(example.replace(/\s+/g, ' ')).toContain(
        `reports ${report.errorCount} errors, every one an \`unsupported-feature\` at its own line, and ${report.warningCount} warnings`,
      );
      const errors = report.diagnostics.filter((d) => d.severity === 'error');
      expect(errors.every((d) => d.code === 'unsupported-feature')).toBe(true);
      for (const d of errors)
        expect(d.message, `line ${d.line}`).toMatch(/: (write|answer|use|attach|call|remove|name) .*\. See docs\/migrating-from-openendpoints\.md\.$/);
      // The replacements the guide names for the three endpoints are the ones validate names.
      const text = corpus.split('\n');
      const at = (needle: string) => errors.filter((d) => text[d.line - 1]!.includes(needle)).map((d) => d.message);
      expect(at('<body-transformation')[0]).toContain('a <body>');
      expect(at('<attachment-transformation')[0]).toContain('<attachment-static>');
      expect(at('<response-transformation')[0]).toContain('<response-body>');
      expect(at('<parameter-transformation')[0]).toContain('<output-intermediate-value>');
      expect(at('RequestLogExpressionCaptureTask')[0]).toContain('remove the task');
    });
  });
});
