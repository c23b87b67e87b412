// `endpoint-service validate` through the built binary, against README.md and
// docs/diagnostics.md: the three formats, the exit codes (0/1/2 and which wins), several files
// per run, and commander's own usage errors.
import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSI, STACK_TRACE, assertBuilt, childEnv, contactForm, positionOf, removeDir, repoRoot, run, tempApp } from './helpers.js';

const HEADER = /^(.+):(\d+):(\d+) {2}(error|warning) {2}([a-z0-9-]+) {2}(.+)$/;

interface JsonDiagnostic {
  file: string;
  line: number;
  column: number;
  severity: string;
  code: string;
  message: string;
}
interface JsonReport {
  valid: boolean;
  errorCount: number;
  warningCount: number;
  diagnostics: JsonDiagnostic[];
}

// One warning and one error in endpoints.xml, one error in the security.xml beside it: the
// positions below are derived from these texts, not typed in.
const INVALID_ENDPOINTS = `<endpoint-folder>
  <endpoint name="signup">
    <parameter name="user-agent"/>
    <taks class="HttpRequest"/>
  </endpoint>
</endpoint-folder>
`;
const INVALID_SECURITY = `<security>
  <secret-key>k</secret-key>
  <secret-kee>foo</secret-kee>
</security>
`;

/** The diagnostics INVALID_ENDPOINTS + INVALID_SECURITY must give, with `prefix` before each file name. */
function expectedInvalid(prefix: string) {
  const shadow = positionOf(INVALID_ENDPOINTS, 'name="user-agent"');
  const taks = positionOf(INVALID_ENDPOINTS, '<taks');
  const kee = positionOf(INVALID_SECURITY, '<secret-kee');
  return [
    { file: `${prefix}endpoints.xml`, ...shadow, severity: 'warning', code: 'parameter-shadows-system' },
    { file: `${prefix}endpoints.xml`, ...taks, severity: 'error', code: 'unknown-element' },
    { file: `${prefix}security.xml`, ...kee, severity: 'error', code: 'unknown-element' },
  ];
}

const contactText = readFileSync(path.join(repoRoot, contactForm), 'utf8');
/** Lines that use ${env:CRM_API_KEY}: the first warns when the variable is unset, naming the others. */
const envLines = contactText.split('\n').flatMap((line, i) => (line.includes('${env:CRM_API_KEY}') ? [i + 1] : []));
/** One warning per unset variable and file, however many lines use it. */
const ENV_WARNINGS = 1;

let parent: string; // holds app/ (invalid), one/ (a single error), tabs/, and a,b:c/
beforeAll(() => {
  assertBuilt();
  parent = tempApp({
    'app/endpoints.xml': INVALID_ENDPOINTS,
    'app/security.xml': INVALID_SECURITY,
    'one/endpoints.xml': '<endpoint-folder>\n  <endpoint name="a">\n    <sucess/>\n  </endpoint>\n</endpoint-folder>\n',
    'tabs/endpoints.xml': '<endpoint-folder>\n\t<endpoint name="a">\n\t\t<success>\t<sucess/></success>\n\t</endpoint>\n</endpoint-folder>\n',
    'a,b:c/endpoints.xml': '<endpoint-folder>\n  <endpont name="x"/>\n</endpoint-folder>\n',
  });
  expect(envLines.length).toBeGreaterThan(1);
});
afterAll(() => removeDir(parent));

function headers(stdout: string) {
  return stdout
    .split('\n')
    .map((l) => HEADER.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ file: m[1]!, line: Number(m[2]), column: Number(m[3]), severity: m[4]!, code: m[5]!, message: m[6]! }));
}

function lastLine(stdout: string): string {
  return stdout.trimEnd().split('\n').at(-1)!;
}

describe('validate --format text (default)', () => {
  it('reports the contact form as valid with one env-not-set warning, at the first ${env:CRM_API_KEY}, counting the others', async () => {
    const r = await run(['validate', contactForm]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    const found = headers(r.stdout);
    expect(found.map((d) => [d.file, d.line, d.severity, d.code])).toEqual([[contactForm, envLines[0], 'warning', 'env-not-set']]);
    const others = envLines.length - 1;
    expect(found[0]!.message).toContain(`It is used ${others} more time${others === 1 ? '' : 's'} in this file`);
    expect(lastLine(r.stdout)).toBe(`0 errors, 1 warning`);
  });

  it('prints only the summary when there is nothing to report', async () => {
    const r = await run(['validate', contactForm], { env: { CRM_API_KEY: 'k' } });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('0 errors, 0 warnings\n');
  });

  it('prints file:line:col  severity  code  message, the source line and a caret for each problem', async () => {
    const r = await run(['validate', 'app/endpoints.xml'], { cwd: parent });
    expect(r.exitCode).toBe(1);
    const lines = r.stdout.split('\n');
    const expected = expectedInvalid('app/');
    expect(headers(r.stdout).map(({ message: _m, ...rest }) => rest)).toEqual(expected);
    // Each header is followed by its source line (indented) and a caret under the column.
    for (const d of expected) {
      const at = lines.findIndex((l) => l.startsWith(`${d.file}:${d.line}:${d.column}  `));
      const source = (d.file.endsWith('security.xml') ? INVALID_SECURITY : INVALID_ENDPOINTS).split('\n')[d.line - 1]!;
      expect(lines[at + 1]).toBe(`  ${source}`);
      expect(lines[at + 2]).toBe(`  ${' '.repeat(d.column - 1)}^`);
    }
    expect(lastLine(r.stdout)).toBe('2 errors, 1 warning');
  });

  it('uses the singular for one error', async () => {
    const r = await run(['validate', 'one/endpoints.xml'], { cwd: parent });
    expect(r.exitCode).toBe(1);
    expect(lastLine(r.stdout)).toBe('1 error, 0 warnings');
    expect(headers(r.stdout)).toMatchObject([{ file: 'one/endpoints.xml', line: 3, column: 5, code: 'unknown-element' }]);
    // A close known name is suggested.
    expect(headers(r.stdout)[0]!.message).toContain('<success>');
  });

  it('keeps the caret under the element when the line is indented with tabs', async () => {
    const r = await run(['validate', 'tabs/endpoints.xml'], { cwd: parent });
    expect(r.exitCode).toBe(1);
    const lines = r.stdout.split('\n');
    const at = lines.findIndex((l) => HEADER.test(l));
    expect(headers(r.stdout)[0]).toMatchObject({ line: 3, code: 'unknown-element' });
    const source = lines[at + 1]!;
    const caret = lines[at + 2]!;
    expect(source).not.toContain('\t');
    expect(caret.trimEnd().endsWith('^')).toBe(true);
    expect(caret.indexOf('^')).toBe(source.indexOf('<sucess'));
  });

  it('writes no ANSI escape codes when stdout is not a terminal', async () => {
    const r = await run(['validate', 'app/endpoints.xml'], { cwd: parent });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).not.toMatch(ANSI);
    expect(r.stderr).not.toMatch(ANSI);
  });

  // The check above would pass for a formatter that never colors; on a real terminal it must
  // color, and NO_COLOR / --no-color must turn that off. `script` gives the child a pseudo-TTY.
  describe.runIf(process.platform === 'linux')('on a terminal', () => {
    const onTty = async (args: string, env: Record<string, string> = {}) => {
      const command = `node ${JSON.stringify(path.join(repoRoot, 'bin/endpoint-service.js'))} ${args}`;
      const r = await execa('script', ['-qec', command, '/dev/null'], {
        cwd: parent,
        env: childEnv({ ...env, TERM: 'xterm' }),
        extendEnv: false,
        reject: false,
        timeout: 20_000,
      });
      return r;
    };
    it('colors the report', async () => {
      const r = await onTty('validate app/endpoints.xml');
      expect(r.stdout).toMatch(ANSI);
      expect(r.stdout).toContain('2 errors, 1 warning');
    });
    it('does not color with NO_COLOR or --no-color', async () => {
      const a = await onTty('validate app/endpoints.xml', { NO_COLOR: '1' });
      const b = await onTty('--no-color validate app/endpoints.xml');
      for (const r of [a, b]) {
        expect(r.stdout).toContain('2 errors, 1 warning');
        expect(r.stdout).not.toMatch(ANSI);
      }
    });
  });
});

describe('validate --format json', () => {
  const parse = (stdout: string): JsonReport => JSON.parse(stdout) as JsonReport;

  it('prints exactly one document with exactly the specified keys', async () => {
    const r = await run(['validate', '--format', 'json', 'app/endpoints.xml'], { cwd: parent });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe('');
    // JSON.parse of the whole stdout fails on a second document or any text around it.
    const report = parse(r.stdout);
    expect(Object.keys(report).sort()).toEqual(['diagnostics', 'errorCount', 'valid', 'warningCount']);
    for (const d of report.diagnostics) {
      expect(Object.keys(d).sort()).toEqual(['code', 'column', 'file', 'line', 'message', 'severity']);
      expect(typeof d.message).toBe('string');
      expect(d.message.length).toBeGreaterThan(0);
    }
    expect(report.diagnostics.map(({ message: _m, ...rest }) => rest)).toEqual(expectedInvalid('app/'));
    expect(report.valid).toBe(false);
    expect(report.errorCount).toBe(2);
    expect(report.warningCount).toBe(1);
  });

  it('gives file as given on the command line, and the referenced file beside it', async () => {
    const absolute = path.join(parent, 'app/endpoints.xml');
    const r = await run(['validate', '--format', 'json', absolute]);
    const files = parse(r.stdout).diagnostics.map((d) => d.file);
    expect(new Set(files)).toEqual(new Set([absolute, path.join(parent, 'app/security.xml')]));

    const dotted = await run(['validate', '--format', 'json', './endpoints.xml'], { cwd: path.join(parent, 'app') });
    expect(
      parse(dotted.stdout)
        .diagnostics.filter((d) => d.code === 'unknown-element')
        .map((d) => path.normalize(d.file))
        .sort(),
    ).toEqual(['endpoints.xml', 'security.xml']);
    expect(parse(dotted.stdout).diagnostics[0]!.file).toBe('./endpoints.xml');
  });

  it('matches the example of cli.md for a misspelt <task>', async () => {
    // <taks> at line 12, column 5.
    const dir = tempApp({
      'endpoints.xml':
        '<endpoint-folder>\n' +
        '\n'.repeat(9) +
        '  <endpoint name="e">\n' +
        '    <taks class="HttpRequest"><url>http://x.example/</url></taks>\n' +
        '  </endpoint>\n</endpoint-folder>\n',
    });
    try {
      const r = await run(['validate', '--format', 'json', 'endpoints.xml'], { cwd: dir });
      expect(r.exitCode).toBe(1);
      const report = parse(r.stdout);
      expect(report).toMatchObject({ valid: false, errorCount: 1, warningCount: 0 });
      expect(report.diagnostics).toHaveLength(1);
      expect(report.diagnostics[0]).toMatchObject({ file: 'endpoints.xml', line: 12, column: 5, severity: 'error', code: 'unknown-element' });
      expect(report.diagnostics[0]!.message).toContain('Did you mean <task>?');
    } finally {
      removeDir(dir);
    }
  });

  it('is valid with warnings, and stays one document when --max-warnings is exceeded', async () => {
    const ok = await run(['validate', '--format', 'json', contactForm]);
    expect(ok.exitCode).toBe(0);
    expect(parse(ok.stdout)).toMatchObject({ valid: true, errorCount: 0, warningCount: ENV_WARNINGS });
    const over = await run(['validate', '--format', 'json', '--max-warnings', String(ENV_WARNINGS - 1), contactForm]);
    expect(over.exitCode).toBe(1);
    expect(parse(over.stdout)).toMatchObject({ valid: true, warningCount: ENV_WARNINGS });
  });

  it('lists the other uses of an unset variable in otherPositions, and only there', async () => {
    const r = await run(['validate', '--format', 'json', contactForm]);
    const [warning, ...rest] = parse(r.stdout).diagnostics as (JsonDiagnostic & { otherPositions?: { line: number; column: number }[] })[];
    expect(rest).toEqual([]);
    expect(warning).toMatchObject({ file: contactForm, line: envLines[0], code: 'env-not-set' });
    expect(Object.keys(warning!).sort()).toEqual(['code', 'column', 'file', 'line', 'message', 'otherPositions', 'severity']);
    expect(warning!.otherPositions!.map((p) => p.line)).toEqual(envLines.slice(1));
    for (const p of warning!.otherPositions!) expect(Object.keys(p).sort()).toEqual(['column', 'line']);
  });

  it('is not valid when a file cannot be read', async () => {
    const r = await run(['validate', '--format', 'json', 'no-such/endpoints.xml']);
    expect(r.exitCode).toBe(2);
    const report = parse(r.stdout);
    expect(report.valid).toBe(false);
    expect(report.errorCount).toBeGreaterThanOrEqual(1);
    expect(report.diagnostics.map((d) => d.file)).toContain('no-such/endpoints.xml');
  });
});

describe('validate --format github', () => {
  const ANNOTATION = /^::(error|warning) file=([^,]*),line=(\d+),col=(\d+)::(.+)$/;

  it('prints one annotation per diagnostic, the same as the JSON report', async () => {
    const [gh, json] = await Promise.all([
      run(['validate', '--format', 'github', 'app/endpoints.xml'], { cwd: parent }),
      run(['validate', '--format', 'json', 'app/endpoints.xml'], { cwd: parent }),
    ]);
    expect(gh.exitCode).toBe(1);
    const lines = gh.stdout.split('\n').filter((l) => l !== '');
    const annotations = lines.map((l) => {
      const m = ANNOTATION.exec(l);
      expect(m, l).not.toBeNull();
      return { severity: m![1], file: m![2], line: Number(m![3]), column: Number(m![4]), message: m![5] };
    });
    const report = JSON.parse(json.stdout) as JsonReport;
    expect(annotations).toEqual(report.diagnostics.map(({ code: _c, ...rest }) => rest));
    expect(annotations.map((a) => a.severity).sort()).toEqual(['error', 'error', 'warning']);
  });

  it('escapes "," and ":" in the file property', async () => {
    const r = await run(['validate', '--format', 'github', 'a,b:c/endpoints.xml'], { cwd: parent });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(/^::error file=a%2Cb%3Ac\/endpoints\.xml,line=2,col=3::.+\n$/);
  });
});

describe('validate exit codes', () => {
  it('0 for warnings within --max-warnings, 1 above it', async () => {
    const n = ENV_WARNINGS;
    expect((await run(['validate', '--max-warnings', String(n), contactForm])).exitCode).toBe(0);
    const over = await run(['validate', '--max-warnings', String(n - 1), contactForm]);
    expect(over.exitCode).toBe(1);
    expect(over.stdout).toContain(`0 errors, ${n} warning`);
    expect((await run(['validate', '--max-warnings', '0', contactForm], { env: { CRM_API_KEY: 'k' } })).exitCode).toBe(0);
  });

  it('1 for errors', async () => {
    expect((await run(['validate', 'one/endpoints.xml'], { cwd: parent })).exitCode).toBe(1);
  });

  it('2 for an unreadable file, even beside a file with errors, in either order', async () => {
    for (const args of [
      ['missing/endpoints.xml', 'one/endpoints.xml'],
      ['one/endpoints.xml', 'missing/endpoints.xml'],
    ]) {
      const r = await run(['validate', ...args], { cwd: parent });
      expect(r.exitCode).toBe(2);
      // The readable file is still checked and reported.
      expect(headers(r.stdout).map((d) => d.file)).toEqual(expect.arrayContaining(['one/endpoints.xml', 'missing/endpoints.xml']));
      expect(`${r.stdout}${r.stderr}`).not.toMatch(STACK_TRACE);
    }
  });

  it('checks several files in one run and sums their counts', async () => {
    const r = await run(['validate', contactForm, path.join(parent, 'app/endpoints.xml'), path.join(parent, 'one/endpoints.xml')]);
    expect(r.exitCode).toBe(1);
    const files = new Set(headers(r.stdout).map((d) => d.file));
    expect(files).toEqual(
      new Set([contactForm, path.join(parent, 'app/endpoints.xml'), path.join(parent, 'app/security.xml'), path.join(parent, 'one/endpoints.xml')]),
    );
    expect(lastLine(r.stdout)).toBe(`3 errors, ${ENV_WARNINGS + 1} warnings`);

    const json = await run(['validate', '--format', 'json', contactForm, path.join(parent, 'one/endpoints.xml')]);
    expect(json.exitCode).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: false, errorCount: 1, warningCount: ENV_WARNINGS });
  });

  it.each([
    ['an unknown option', ['validate', '--bogus', contactForm], '--bogus'],
    ['a bad --format choice', ['validate', '--format', 'yaml', contactForm], 'yaml'],
    ['a missing file argument', ['validate'], 'file'],
    ['a non-numeric --max-warnings', ['validate', '--max-warnings', 'many', contactForm], 'many'],
    ['a negative --max-warnings', ['validate', '--max-warnings', '-1', contactForm], '-1'],
    ['an unknown command', ['vaildate', contactForm], 'vaildate'],
  ])('2 for %s, with the reason on stderr and nothing on stdout', async (_what, args, named) => {
    const r = await run(args);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(named);
    expect(r.stderr).not.toMatch(STACK_TRACE);
  });

  it('2 for too many arguments, with the counts and without the arguments themselves', async () => {
    const r = await run(['dry-run', contactForm, 'extra', 'more']);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe("error: too many arguments for 'dry-run'. Expected 1 argument but got 3.\n");
    const init = await run(['init', 'one', 'two']);
    expect(init.exitCode).toBe(2);
    expect(init.stderr).toBe("error: too many arguments for 'init'. Expected 1 argument but got 2.\n");
  });

  it('0 for --help and --version', async () => {
    const version = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
    const v = await run(['--version']);
    expect(v.exitCode).toBe(0);
    expect(v.stdout.trim()).toBe(version);
    const help = await run(['--help']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('validate');
    const validateHelp = await run(['validate', '--help']);
    expect(validateHelp.exitCode).toBe(0);
    expect(validateHelp.stdout).toContain('--format');
    expect(validateHelp.stdout).toContain('--max-warnings');
  });
});
