// Hostile and broken input through the built binary: each file must end in exit 1 with a
// diagnostic located in that file (or exit 2 with a clean message when it cannot be read), never
// a stack trace, a hang or a report that echoes megabytes back. `timeout` is a hang guard only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { ANSI, STACK_TRACE, assertBuilt, bin, positionOf, removeDir, run, tempApp } from './helpers.js';

const HEADER = /^(.+):(\d+):(\d+)  (error|warning)  ([a-z0-9-]+)  (.+)$/gm;
// Generous: the 10 MB cases take a few seconds of CPU, and CI machines are often shared.
const HANG_GUARD = 60_000;

/** Deterministic pseudo-random bytes, so a failure can be reproduced. */
function bytes(length: number, seed: number, pick: (n: number) => number = (n) => n & 0xff): Buffer {
  const out = Buffer.alloc(length);
  let x = seed >>> 0;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = pick(x >>> 24);
  }
  return out;
}

const deep = '<endpoint-folder>\n' + '<endpoint-folder>\n'.repeat(10_000) + '</endpoint-folder>\n'.repeat(10_000) + '</endpoint-folder>\n';

const entities = Array.from({ length: 9 }, (_, i) => `  <!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('\n');
const bomb = `<?xml version="1.0"?>
<!DOCTYPE endpoint-folder [
  <!ENTITY lol0 "lol">
${entities}
]>
<endpoint-folder>
  <parameter name="p" default-value="&lol9;"/>
  <endpoint name="e"><success><response-body>&lol9;</response-body></success></endpoint>
</endpoint-folder>
`;

const TEN_MB = 10 * 1024 * 1024;
const bigText = `<endpoint-folder>\n  <endpoint name="e">\n${'x'.repeat(TEN_MB)}\n  </endpoint>\n</endpoint-folder>\n`;

// A valid megabyte on line 1 and one unknown element at its very end: the column must still be exact.
const oneLine =
  '<endpoint-folder>' +
  Array.from({ length: 12_000 }, (_, i) => `<endpoint name="e${i}"><parameter name="p" default-value="v"/></endpoint>`).join('') +
  '<bogus/></endpoint-folder>';

// One start tag with two hundred thousand attributes (checking each name against all before it would take minutes), all unknown; and the same with one name twice at the end.
const ATTRIBUTES = 200_000;
const manyAttributes = `<endpoint-folder ${Array.from({ length: ATTRIBUTES }, (_, i) => `a${i}="v"`).join(' ')}/>\n`;
const duplicateAttribute = manyAttributes.replace('/>', ' a7="again"/>');
// 20,000 tasks, each after a task that does not exist: a suggestion pass over 20,000 ids for each
// would take minutes.
const REFERENCES = 20_000;
const misspelt = `<endpoint-folder><endpoint name="e">\n${Array.from(
  { length: REFERENCES },
  (_, i) => `<task class="HttpRequest" id="t${i}"><after task-id="u${i}"/><url>https://x.example/</url></task>\n`,
).join('')}</endpoint></endpoint-folder>\n`;
// Fourteen endpoints that may each forward to all the others: listing every cycle would never end.
const MESH = 14;
const forwardMesh = `<endpoint-folder>\n${Array.from(
  { length: MESH },
  (_, i) =>
    `<endpoint name="e${i}"><parameter name="p"/>${Array.from({ length: MESH }, (_, j) => j)
      .filter((j) => j !== i)
      .map((j) => `<success if="\${p}" equals="${j}"><forward-to-endpoint endpoint-name="e${j}"/></success>`)
      .join('')}</endpoint>\n`,
).join('')}</endpoint-folder>\n`;
// 50,000 tasks, each after the next one in the file: a chain as deep as it is long.
const CHAIN = 50_000;
const task = (i: number, after: number | null) => `<task class="HttpRequest" id="t${i}">${after === null ? '' : `<after task-id="t${after}"/>`}<url>https://x.example/</url></task>\n`;
const reverseChain = `<endpoint-folder><endpoint name="e">\n${Array.from({ length: CHAIN }, (_, i) => task(i, i < CHAIN - 1 ? i + 1 : null)).join('')}</endpoint></endpoint-folder>\n`;
const taskRing = `<endpoint-folder><endpoint name="e">\n${Array.from({ length: CHAIN }, (_, i) => task(i, (i + 1) % CHAIN)).join('')}</endpoint></endpoint-folder>\n`;
const deepJson = `<endpoint-folder><endpoint name="e"><task class="HttpRequest"><url>https://x.example/</url><json-body>${'['.repeat(50_000)}${']'.repeat(50_000)}</json-body></task></endpoint></endpoint-folder>\n`;
// A report of about 300 KB: more than a pipe holds at once.
const longReport = `<endpoint-folder ${Array.from({ length: 3000 }, (_, i) => `a${i}="v"`).join(' ')}/>\n`;

const latin1 = Buffer.concat([
  Buffer.from('<endpoint-folder>\n  <parameter name="city" default-value="Z'),
  Buffer.from([0xfc]), // "ü" in Latin-1, never valid in UTF-8
  Buffer.from('rich"/>\n</endpoint-folder>\n'),
]);

const FILES: Record<string, string | Buffer> = {
  'empty/endpoints.xml': '',
  'blank/endpoints.xml': '  \n\n\t\n',
  'garbage/endpoints.xml': bytes(64 * 1024, 42),
  // Valid UTF-8 but full of NULs and control characters: reaches the XML parser itself.
  'controls/endpoints.xml': Buffer.concat([Buffer.from('<endpoint-folder>'), bytes(4096, 7, (n) => n & 0x1f), Buffer.from('</endpoint-folder>')]),
  // One NUL inside an otherwise valid value: XML forbids it, so it must not reach a mail or URL.
  'nul/endpoints.xml': '<endpoint-folder>\n  <parameter name="p" default-value="a\u0000b"/>\n</endpoint-folder>\n',
  'truncated/endpoints.xml': '<endpoint-folder>\n  <endpoint name="e">\n    <success>\n      <redirect-to>https://exam',
  'deep/endpoints.xml': deep,
  'bomb/endpoints.xml': bomb,
  'big-text/endpoints.xml': bigText,
  'one-line/endpoints.xml': oneLine,
  'latin1/endpoints.xml': latin1,
  'many-attributes/endpoints.xml': manyAttributes,
  'duplicate-attribute/endpoints.xml': duplicateAttribute,
  'long-report/endpoints.xml': longReport,
  'misspelt/endpoints.xml': misspelt,
  'forward-mesh/endpoints.xml': forwardMesh,
  'reverse-chain/endpoints.xml': reverseChain,
  'task-ring/endpoints.xml': taskRing,
  'deep-json/endpoints.xml': deepJson,
  'directory/endpoints.xml/keep': '',
};

let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = tempApp(FILES);
});
afterAll(() => removeDir(dir));

async function validate(name: string, format = 'text') {
  const file = path.join(dir, name, 'endpoints.xml');
  const r = await run(['validate', '--format', format, file], { timeout: HANG_GUARD });
  expect(r.timedOut, `${name} did not finish within ${HANG_GUARD} ms`).toBe(false);
  const all = `${r.stdout}\n${r.stderr}`;
  expect(all).not.toMatch(STACK_TRACE);
  // The report never echoes the hostile bytes back: no megabytes, no terminal control codes.
  expect(r.stdout.length).toBeLessThan(64 * 1024);
  expect(all).not.toMatch(ANSI);
  // eslint-disable-next-line no-control-regex
  expect(all).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  return { r, file };
}

/** The text report's diagnostics: every one must name the file and a line that exists in it. */
function located(stdout: string, file: string, content: string | Buffer) {
  const lines = content.toString('latin1').split('\n').length;
  const found = [...stdout.matchAll(HEADER)].map((m) => ({ file: m[1], line: Number(m[2]), column: Number(m[3]), severity: m[4], code: m[5] }));
  expect(found.length).toBeGreaterThan(0);
  for (const d of found) {
    expect(d.file).toBe(file);
    expect(d.line).toBeGreaterThanOrEqual(1);
    expect(d.line).toBeLessThanOrEqual(lines);
    expect(d.column).toBeGreaterThanOrEqual(1);
  }
  expect(found.some((d) => d.severity === 'error')).toBe(true);
  return found;
}

describe('validate on hostile input', { timeout: 2 * HANG_GUARD }, () => {
  it.each(['empty', 'blank'])('%s file: exit 1, reported at 1:1', async (name) => {
    const { r, file } = await validate(name);
    expect(r.exitCode).toBe(1);
    expect(located(r.stdout, file, FILES[`${name}/endpoints.xml`]!)[0]).toMatchObject({ line: 1, column: 1 });
  });

  it.each(['garbage', 'controls'])('binary %s: exit 1 with a located diagnostic', async (name) => {
    const { r, file } = await validate(name);
    expect(r.exitCode).toBe(1);
    located(r.stdout, file, FILES[`${name}/endpoints.xml`]!);
  });

  it('a NUL inside a value: exit 1 at the NUL', async () => {
    const { r, file } = await validate('nul');
    expect(r.exitCode).toBe(1);
    const text = FILES['nul/endpoints.xml'] as string;
    expect(located(r.stdout, file, text)[0]).toMatchObject({ ...positionOf(text, '\u0000'), code: 'xml-malformed' });
  });

  it('truncated XML: exit 1, reported where the file ends', async () => {
    const { r, file } = await validate('truncated');
    expect(r.exitCode).toBe(1);
    const text = FILES['truncated/endpoints.xml'] as string;
    const [d] = located(r.stdout, file, text);
    expect(d!.line).toBe(text.split('\n').length);
  });

  it('10,000 nested elements: exit 1 at a line inside the nesting, no stack overflow', async () => {
    const { r, file } = await validate('deep');
    expect(r.exitCode).toBe(1);
    const [d] = located(r.stdout, file, deep);
    expect(d!.line).toBeGreaterThan(1);
    expect(d!.line).toBeLessThanOrEqual(10_001);
  });

  it('entity-expansion bomb: exit 1 at the DOCTYPE, nothing expanded', async () => {
    const { r, file } = await validate('bomb');
    expect(r.exitCode).toBe(1);
    const found = located(r.stdout, file, bomb);
    expect(found[0]!.line).toBe(positionOf(bomb, '<!DOCTYPE').line);
    expect(r.stdout).not.toContain('lollol');
  });

  it('a 10 MB text node: exit 1 with a located diagnostic', async () => {
    const { r, file } = await validate('big-text');
    expect(r.exitCode).toBe(1);
    located(r.stdout, file, bigText);
  });

  it('1 MB on one line: exit 1 with the exact column of the unknown element', async () => {
    const { r } = await validate('one-line', 'json');
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout) as { diagnostics: { line: number; column: number; code: string }[] };
    expect(report.diagnostics).toEqual([expect.objectContaining({ line: 1, column: oneLine.indexOf('<bogus/>') + 1, code: 'unknown-element' })]);
  });

  it('a file that is not UTF-8: exit 1 at the offending byte', async () => {
    const { r, file } = await validate('latin1');
    expect(r.exitCode).toBe(1);
    const [d] = located(r.stdout, file, latin1);
    const before = latin1.subarray(0, latin1.indexOf(0xfc)).toString('utf8');
    expect(d).toMatchObject({ line: 2, column: before.length - before.lastIndexOf('\n') });
  });

  it('a Latin-1 file that declares its encoding is read as Latin-1', async () => {
    const declared = tempApp({
      'endpoints.xml': Buffer.concat([
        Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?>\n<endpoint-folder>\n  <endpoint name="caf'),
        Buffer.from([0xe9]),
        Buffer.from('"/>\n</endpoint-folder>\n'),
      ]),
    });
    try {
      const r = await run(['validate', '--format', 'json', path.join(declared, 'endpoints.xml')], { timeout: HANG_GUARD });
      // "café" is not a valid endpoint name; the message proves the byte was decoded as "é".
      expect(r.exitCode).toBe(1);
      const report = JSON.parse(r.stdout) as { diagnostics: { code: string; message: string }[] };
      expect(report.diagnostics).toEqual([expect.objectContaining({ code: 'invalid-endpoint-name' })]);
      expect(report.diagnostics[0]!.message).toContain('café');
    } finally {
      removeDir(declared);
    }
  });

  it('a start tag with 200,000 attributes: every unknown one reported, within the hang guard', async () => {
    const r = await run(['validate', '--format', 'json', path.join(dir, 'many-attributes', 'endpoints.xml')], { timeout: HANG_GUARD });
    expect(r.timedOut).toBe(false);
    expect(r.stderr).not.toMatch(STACK_TRACE);
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout) as { errorCount: number; diagnostics: { code: string; column: number }[] };
    expect(report.errorCount).toBe(ATTRIBUTES);
    expect(new Set(report.diagnostics.map((d) => d.code))).toEqual(new Set(['unknown-attribute']));
    expect(report.diagnostics[ATTRIBUTES - 1]!.column).toBe(manyAttributes.indexOf(`a${ATTRIBUTES - 1}=`) + 1);
  });

  it('the same attribute twice among 200,000: exit 1 at the second one', async () => {
    const { r } = await validate('duplicate-attribute', 'json');
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout) as { diagnostics: { code: string; line: number; column: number; message: string }[] };
    expect(report.diagnostics).toEqual([
      expect.objectContaining({ code: 'xml-malformed', line: 1, column: duplicateAttribute.indexOf('a7="again"') + 1 }),
    ]);
    expect(report.diagnostics[0]!.message).toContain('"a7" appears twice');
  });

  it('20,000 references to missing tasks: each reported, suggestions while their budget lasts', async () => {
    const r = await run(['validate', '--format', 'json', path.join(dir, 'misspelt', 'endpoints.xml')], { timeout: HANG_GUARD });
    expect(r.timedOut).toBe(false);
    expect(r.stderr).not.toMatch(STACK_TRACE);
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout) as { errorCount: number; diagnostics: { code: string; message: string }[] };
    expect(report.errorCount).toBe(REFERENCES);
    expect(report.diagnostics.every((d) => d.code === 'unknown-task')).toBe(true);
    expect(report.diagnostics[0]!.message).toContain('Did you mean "t0"?');
    expect(report.diagnostics[REFERENCES - 1]!.message).not.toContain('Did you mean');
  });

  it('endpoints that may all forward to each other: their cycles reported, no hang', async () => {
    const { r } = await validate('forward-mesh', 'json');
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout) as { diagnostics: { code: string; message: string }[] };
    expect(report.diagnostics.length).toBeGreaterThan(0);
    expect(report.diagnostics.every((d) => d.code === 'forward-cycle')).toBe(true);
    expect(report.diagnostics[0]!.message).toContain('e0 -> e1 -> e0');
  });

  it('50,000 tasks chained in reverse file order: valid, no stack overflow', async () => {
    const { r } = await validate('reverse-chain', 'json');
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ valid: true, errorCount: 0 });
  });

  it('50,000 tasks in one ring: one task-cycle', async () => {
    const r = await run(['validate', '--format', 'json', path.join(dir, 'task-ring', 'endpoints.xml')], { timeout: HANG_GUARD });
    expect(r.timedOut).toBe(false);
    expect(r.stderr).not.toMatch(STACK_TRACE);
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout) as { diagnostics: { code: string; message: string }[] };
    expect(report.diagnostics.map((d) => d.code)).toEqual(['task-cycle']);
    expect(report.diagnostics[0]!.message).toContain('t0 -> t49999 -> t49998 -> ');
  });

  it('a JSON body nested 50,000 deep: invalid-json, no stack overflow', async () => {
    const { r, file } = await validate('deep-json', 'json');
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout) as { diagnostics: { file: string; code: string; message: string }[] };
    expect(report.diagnostics).toEqual([expect.objectContaining({ file, code: 'invalid-json' })]);
    expect(report.diagnostics[0]!.message).toContain('nested more than 200 levels');
  });

  it('a reader that closes the pipe early ends validate quietly, with its exit code', async () => {
    const child = spawn(process.execPath, [bin, 'validate', path.join(dir, 'long-report', 'endpoints.xml')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toMatch(STACK_TRACE);
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(1);
  });

  it('a directory given as the file: exit 2 with a clean message naming it', async () => {
    const { r, file } = await validate('directory');
    expect(r.exitCode).toBe(2);
    expect(`${r.stdout}${r.stderr}`).toContain(file);
    expect(`${r.stdout}${r.stderr}`).not.toContain('EISDIR');
  });
});
