// compat/README.md: the OpenEndpoints example application as it is, and with its unsupported
// features removed. Expected positions are derived from the corpus text (openendpoints.ts), so
// a change of the corpus changes the expectations, not the other way round.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, run } from '../cli/helpers.js';
import {
  KEPT_ENDPOINTS,
  UNSUPPORTED_CLASSES,
  corpusPresent,
  corpusDir,
  endpoints,
  lineAt,
  strip,
  strippedFixtureDir,
  tasks,
  unsupportedUses,
  withoutComments,
  writeStrippedApp,
} from './openendpoints.js';

interface Diagnostic {
  file: string;
  line: number;
  column: number;
  severity: 'error' | 'warning';
  code: string;
  message: string;
}
interface Report {
  valid: boolean;
  errorCount: number;
  warningCount: number;
  diagnostics: Diagnostic[];
}

const corpusFile = path.join(corpusDir, 'endpoints.xml');

async function validateJson(file: string): Promise<{ exitCode: number | undefined; report: Report; stderr: string }> {
  const r = await run(['validate', '--format', 'json', file]);
  return { exitCode: r.exitCode, report: JSON.parse(r.stdout) as Report, stderr: r.stderr };
}

if (!corpusPresent) {
  console.log(`compat: the OpenEndpoints corpus is not at ${corpusDir}; its tests are skipped (CI requires it).`);
}

beforeAll(() => {
  if (corpusPresent) assertBuilt();
});

describe.skipIf(!corpusPresent)('the OpenEndpoints example application, as it is', () => {
  let xml: string;
  let result: Awaited<ReturnType<typeof validateJson>>;
  beforeAll(async () => {
    xml = readFileSync(corpusFile, 'utf8');
    result = await validateJson(corpusFile);
  });

  it('uses unsupported features (else this test checks nothing)', () => {
    const uses = unsupportedUses(xml);
    expect(uses.length).toBeGreaterThan(0);
    // Every kind the corpus is known to hold is found by the scan.
    expect(new Set(uses.map((u) => u.name))).toEqual(
      new Set([
        'body-transformation',
        'attachment-transformation',
        'parameter-transformation',
        'response-transformation',
        'attachment-ooxml-parameter-expansion',
        'ooxml-parameter-expansion',
        ...UNSUPPORTED_CLASSES,
      ]),
    );
  });

  it('reports every use as unsupported-feature, by name, at its own line', () => {
    expect(result.exitCode).toBe(1);
    const reported = result.report.diagnostics.filter((d) => d.code === 'unsupported-feature');
    const expected = unsupportedUses(xml);
    expect(reported.map((d) => d.line)).toEqual(expected.map((u) => u.line));
    for (const [i, d] of reported.entries()) {
      expect(d.file).toBe(corpusFile);
      expect(d.severity).toBe('error');
      expect(d.message).toContain(expected[i]!.name);
    }
  });

  it('has no error of any other code (warnings are allowed)', () => {
    const others = result.report.diagnostics.filter((d) => d.severity === 'error' && d.code !== 'unsupported-feature');
    expect(others).toEqual([]);
    expect(result.report.errorCount).toBe(unsupportedUses(xml).length);
    expect(result.stderr).toBe('');
  });

  it('gives an Email task whose only bodies are <body-transformation> nothing beyond those reports', () => {
    const scan = withoutComments(xml);
    const onlyTransformed = tasks(scan).filter((t) => {
      const inner = scan.slice(t.start, t.end);
      return /Email/.test(t.klass) && /<body-transformation[\s/>]/.test(inner) && !/<body[\s/>]/.test(inner);
    });
    expect(onlyTransformed.length).toBeGreaterThan(0);
    const uses = unsupportedUses(xml);
    for (const t of onlyTransformed) {
      const [first, last] = [lineAt(scan, t.start), lineAt(scan, t.end - 1)];
      const inTask = result.report.diagnostics.filter((d) => d.line >= first && d.line <= last);
      const expectedLines = uses.filter((u) => u.line >= first && u.line <= last).map((u) => u.line);
      expect(inTask.map((d) => [d.line, d.code])).toEqual(expectedLines.map((line) => [line, 'unsupported-feature']));
    }
  });
});

describe.skipIf(!corpusPresent)('the OpenEndpoints example application without its unsupported features', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'es-compat-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('removes exactly the endpoints that only make sense with unsupported features', () => {
    const xml = readFileSync(corpusFile, 'utf8');
    const { removedEndpoints } = strip(xml);
    const all = endpoints(withoutComments(xml)).map((e) => e.name);
    expect(all).toEqual(expect.arrayContaining(KEPT_ENDPOINTS));
    expect(removedEndpoints.sort()).toEqual(['doc', 'download-pdf', 'form', 'html-content', 'json', 'json2', 'json3', 'json4', 'pdf']);
    // Each removed endpoint does use an unsupported feature itself.
    const scan = withoutComments(xml);
    for (const e of endpoints(scan).filter((x) => removedEndpoints.includes(x.name))) {
      expect(
        unsupportedUses(xml).some((u) => u.offset > e.start && u.offset < e.end),
        e.name,
      ).toBe(true);
    }
  });

  it('validates with exit 0 and no error', async () => {
    const { text } = strip(readFileSync(corpusFile, 'utf8'));
    expect(unsupportedUses(text)).toEqual([]);
    writeStrippedApp(dir, text);
    const { exitCode, report } = await validateJson(path.join(dir, 'endpoints.xml'));
    expect(report.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(exitCode).toBe(0);
    expect(report.valid).toBe(true);
  });

  // fixtures/openendpoints-stripped is what the serve tests use: it must be this same copy.
  // Regenerate it with UPDATE_FIXTURES=1 npx vitest run test/compat
  it('is the copy committed as fixtures/openendpoints-stripped', async () => {
    const { text } = strip(readFileSync(corpusFile, 'utf8'));
    if (process.env.UPDATE_FIXTURES === '1') writeStrippedApp(strippedFixtureDir, text);
    expect(readFileSync(path.join(strippedFixtureDir, 'endpoints.xml'), 'utf8')).toBe(text);
    for (const name of ['security.xml', 'email-sending-configuration.xml', 'static/static-subdirectory/spheres.png']) {
      expect(readFileSync(path.join(strippedFixtureDir, name)).equals(readFileSync(path.join(corpusDir, name))), name).toBe(true);
    }
    const { exitCode, report } = await validateJson(path.join(strippedFixtureDir, 'endpoints.xml'));
    expect(report.errorCount).toBe(0);
    expect(exitCode).toBe(0);
  });
});
