// <sign scheme="standard" secret="…"/> on an HttpRequest task: compiled, its secret checked when
// its value is known, a literal secret warned about, anything else refused where it is written.
import { describe, expect, it } from 'vitest';
import { compileXml } from './helpers.js';
import type { HttpRequestTask } from '../../src/tasks/http-request/types.js';

const SECRET = 'whsec_' + Buffer.from('a relay signing key').toString('base64');
const task = (sign: string) => `<endpoint-folder>
<endpoint name="e">
<task class="HttpRequest" id="t"><url>https://example.org/hook</url><json-body>{}</json-body>
${sign}
</task>
</endpoint>
</endpoint-folder>
`;
const codes = (sign: string, env: Record<string, string> = {}, mode: 'validate' | 'serve' = 'validate') =>
  compileXml(task(sign), {}, { env, mode }).diagnostics.map((d) => `${d.line}:${d.column} ${d.severity} ${d.code}`);

describe('<sign>', () => {
  it('compiles with a secret from the environment', () => {
    const result = compileXml(task('<sign scheme="standard" secret="${env:RELAY}"/>'), {}, { env: { RELAY: SECRET } });
    expect(result.diagnostics).toEqual([]);
    const t = result.application!.endpoints[0]!.tasks[0] as HttpRequestTask;
    expect(t.sign?.scheme).toBe('standard');
    expect(t.sign?.secret.parts).toEqual([{ kind: 'env', name: 'RELAY' }]);
  });

  it('a literal secret is a warning where the file is checked; a secret that is not whsec_ and base64 an error', () => {
    expect(codes(`<sign scheme="standard" secret="${SECRET}"/>`)).toEqual(['4:25 warning secret-in-file']);
    expect(codes(`<sign scheme="standard" secret="${SECRET}"/>`, {}, 'serve')).toEqual([]);
    expect(codes('<sign scheme="standard" secret="whsec_not base64!"/>')).toEqual(['4:25 warning secret-in-file', '4:25 error invalid-signing-secret']);
    expect(codes('<sign scheme="standard" secret="${env:RELAY}"/>', { RELAY: 'plain words' })).toEqual(['4:25 error invalid-signing-secret']);
  });

  it('refuses another scheme (with a suggestion) and a missing attribute', () => {
    expect(codes('<sign scheme="standrd" secret="${env:RELAY}"/>', { RELAY: SECRET })).toEqual(['4:7 error invalid-value']);
    expect(compileXml(task('<sign scheme="standrd" secret="${env:RELAY}"/>'), {}, { env: { RELAY: SECRET } }).diagnostics[0]!.message).toContain(
      'did you mean "standard"',
    );
    expect(codes('<sign secret="${env:RELAY}"/>', { RELAY: SECRET })).toEqual(['4:1 error missing-attribute']);
    expect(codes('<sign scheme="standard"/>')).toEqual(['4:1 error missing-attribute']);
  });
});
