// validate's exit codes and where it writes, in the test's process (validate.e2e.test.ts checks
// the same through the built binary): 0 valid, 1 errors or more warnings than --max-warnings,
// 2 a file that cannot be read, which wins over 1.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validate } from '../../src/cli/validate.js';
import { collectingIo } from '../helpers/command-io.js';
import { contactForm, removeDir, repoRoot, tempApp } from './helpers.js';

const CONTACT_FORM = path.join(repoRoot, contactForm);
let parent: string;
beforeAll(() => {
  parent = tempApp({ 'one/endpoints.xml': '<endpoint-folder>\n  <endpoint name="a">\n    <sucess/>\n  </endpoint>\n</endpoint-folder>\n' });
});
afterAll(() => removeDir(parent));

describe('validate in process', () => {
  it('0 for a valid application, the report on stdout and nothing on stderr', async () => {
    const io = collectingIo({ CRM_API_KEY: 'k' });
    expect(await validate([CONTACT_FORM], { format: 'text' }, io)).toBe(0);
    expect(io.out()).toBe('0 errors, 0 warnings\n');
    expect(io.err()).toBe('');
  });

  it('reads ${env:…} from the environment it is given', async () => {
    const io = collectingIo({});
    expect(await validate([CONTACT_FORM], { format: 'json' }, io)).toBe(0);
    const report = JSON.parse(io.out()) as { valid: boolean; warningCount: number; diagnostics: { code: string }[] };
    expect(report.valid).toBe(true);
    expect(report.diagnostics.map((d) => d.code)).toEqual(['env-not-set']);
  });

  it('1 for more warnings than --max-warnings, saying why on stderr only', async () => {
    const io = collectingIo({});
    expect(await validate([CONTACT_FORM], { format: 'text', maxWarnings: 0 }, io)).toBe(1);
    expect(io.out()).toContain('0 errors, 1 warning');
    expect(io.err()).toBe('endpoint-service: too many warnings: 1, at most 0 allowed (--max-warnings).\n');
    expect(await validate([CONTACT_FORM], { format: 'text', maxWarnings: 1 }, collectingIo({}))).toBe(0);
  });

  it('1 for errors', async () => {
    const io = collectingIo();
    expect(await validate([path.join(parent, 'one/endpoints.xml')], { format: 'json' }, io)).toBe(1);
    expect(JSON.parse(io.out())).toMatchObject({ valid: false, errorCount: 1 });
  });

  it('2 for a file it cannot read, beside a file with errors, and both are reported', async () => {
    const io = collectingIo();
    const missing = path.join(parent, 'missing/endpoints.xml');
    expect(await validate([path.join(parent, 'one/endpoints.xml'), missing], { format: 'json' }, io)).toBe(2);
    const report = JSON.parse(io.out()) as { valid: boolean; diagnostics: { file: string; code: string }[] };
    expect(report.valid).toBe(false);
    expect(report.diagnostics.find((d) => d.file === missing)?.code).toBe('file-unreadable');
  });

  it('writes no colour to a writer that is not a terminal, and colours one that is unless NO_COLOR', async () => {
    const file = [path.join(parent, 'one/endpoints.xml')];
    const plain = collectingIo();
    await validate(file, { format: 'text' }, plain);
    expect(plain.out()).not.toMatch(/\u001b\[/);
    let out = '';
    const terminal = { ...collectingIo(), stdout: { isTTY: true, write: (text: string) => (out += text) } };
    await validate(file, { format: 'text' }, terminal);
    expect(out).toMatch(/\u001b\[/);
    out = '';
    await validate(file, { format: 'text' }, { ...terminal, env: { NO_COLOR: '1' } });
    expect(out).not.toMatch(/\u001b\[/);
  });
});
