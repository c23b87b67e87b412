// Where validate's caret points, through the binary: at the placeholder a diagnostic is about (in
// text, CDATA or an attribute), and at the place of a start tag's missing ">" rather than the tag
// that follows it. The positions are computed from the file as written (positionOf), so the cases
// say what a reader of the file sees.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, positionOf, removeDir, run, tempApp } from './helpers.js';

const dirs: string[] = [];
beforeAll(assertBuilt);
afterAll(() => dirs.forEach(removeDir));

async function validate(xml: string): Promise<{ code: number; out: string; file: string }> {
  const dir = tempApp({ 'endpoints.xml': xml });
  dirs.push(dir);
  const file = path.join(dir, 'endpoints.xml');
  const r = await run(['validate', '--no-color', file]);
  return { code: r.exitCode ?? -1, out: r.stdout + r.stderr, file };
}

/** The `file:line:column` and the caret line validate prints for a diagnostic at `needle` (its `nth` occurrence). */
function expectCaretAt(result: { out: string; file: string }, xml: string, needle: string, code: string): void {
  const { line, column } = positionOf(xml, needle);
  expect(result.out).toContain(`${result.file}:${line}:${column}  error  ${code}`);
  const printed = result.out.split('\n');
  const at = printed.findIndex((l) => l.includes(`:${line}:${column}  error  ${code}`));
  // The source line, then the caret under the needle's first character (both indented alike).
  const source = printed[at + 1]!;
  const caret = printed[at + 2]!;
  expect(caret.indexOf('^')).toBe(source.indexOf(needle));
}

const wrap = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n<endpoint-folder>\n${body}\n</endpoint-folder>\n`;

describe('the caret of validate', () => {
  it('points at an unknown placeholder in the text of an element, not at the element', async () => {
    const xml = wrap(
      '  <endpoint name="hello">\n    <parameter name="name"/>\n    <success><response-body>Hello ${nmae}, and welcome</response-body></success>\n  </endpoint>',
    );
    const r = await validate(xml);
    expect(r.code).toBe(1);
    expectCaretAt(r, xml, '${nmae}', 'unknown-placeholder');
    expect(r.out).toContain('Did you mean ${name}?');
  });

  it('points at an unknown placeholder in an attribute and in CDATA', async () => {
    const xml = wrap(
      [
        '  <endpoint name="hello">',
        '    <parameter name="email"/>',
        '    <success if="${emial}" equals="x"/>',
        '    <task class="HttpRequest" id="t">',
        '      <url>http://127.0.0.1:9/x</url>',
        '      <xml-body><![CDATA[<contact mail="${emali}"/>]]></xml-body>',
        '    </task>',
        '  </endpoint>',
      ].join('\n'),
    );
    const r = await validate(xml);
    expectCaretAt(r, xml, '${emial}', 'unknown-placeholder');
    expectCaretAt(r, xml, '${emali}', 'unknown-placeholder');
  });

  it('stays at the element when the placeholder is written with a character reference', async () => {
    const xml = wrap('  <endpoint name="hello">\n    <success><response-body>Hello &#36;{nmae}</response-body></success>\n  </endpoint>');
    const r = await validate(xml);
    expectCaretAt(r, xml, '<response-body>', 'unknown-placeholder');
  });

  it('points where the ">" of an unclosed start tag belongs, not at the next line\'s element', async () => {
    const xml = wrap('  <endpoint name="x"\n    <parameter name="name"/>\n  </endpoint>');
    const r = await validate(xml);
    expect(r.code).toBe(1);
    const { line, column } = positionOf(xml, '\n    <parameter');
    expect(r.out).toContain(`${r.file}:${line}:${column}  error  xml-malformed  Malformed XML: the start tag <endpoint> is not closed`);
  });

  it("shows the source line as the file's declared encoding reads, not as UTF-8", async () => {
    const xml = wrap('  <endpoint name="grüße">\n    <success><response-body>Grüße, ${nmae}</response-body></success>\n  </endpoint>').replace(
      'encoding="UTF-8"',
      'encoding="ISO-8859-1"',
    );
    const dir = tempApp({ 'endpoints.xml': Buffer.from(xml, 'latin1') });
    dirs.push(dir);
    const file = path.join(dir, 'endpoints.xml');
    const r = await run(['validate', '--no-color', file]);
    const out = r.stdout + r.stderr;
    expect(out).toContain('unknown-placeholder');
    // Read again as UTF-8, the ü and ß (one byte each in ISO-8859-1) would print as "?".
    expect(out).toContain('Grüße, ${nmae}');
    expectCaretAt({ out, file }, xml, '${nmae}', 'unknown-placeholder');
  });
});
