// A task timeout longer than a Node.js timer can wait: refused at the attribute by every command
// through the built binary. Accepted, it used to validate cleanly and then make every request
// answer 502 with a TimeoutOverflowWarning.
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, run } from './helpers.js';

const FILE = 'fixtures/invalid/invalid-value--timeout-too-long/endpoints.xml';
const AT = `${FILE}:8:38  error  invalid-value  "1000h" is not a valid value for timeout`;

beforeAll(() => assertBuilt());

describe('timeout="1000h" on a task', () => {
  it('is an invalid-value error for validate (exit 1), in the JSON report too', async () => {
    const text = await run(['validate', FILE]);
    expect(text.exitCode).toBe(1);
    expect(text.stdout).toContain(AT);
    expect(text.stdout).toContain('1 error, 0 warnings');

    const json = await run(['validate', '--format', 'json', FILE]);
    const report = JSON.parse(json.stdout) as { valid: boolean; diagnostics: { code: string; line: number; column: number }[] };
    expect(report.valid).toBe(false);
    expect(report.diagnostics.map((d) => `${d.code} ${d.line}:${d.column}`)).toEqual(['invalid-value 8:38']);
  });

  it('is an invalid-value error for dry-run (exit 1, nothing on stdout)', async () => {
    const result = await run(['dry-run', FILE]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(AT);
  });

  it('keeps serve from starting (exit 1, no ready line, no TimeoutOverflowWarning)', async () => {
    const result = await run(['serve', FILE, '--port', '0', '--workers', '1']);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(AT);
    expect(result.stderr).not.toContain('TimeoutOverflowWarning');
  });
});
