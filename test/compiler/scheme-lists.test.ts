// An unknown scheme with no close name is answered with the schemes there are, taken from the
// tables in src/webhooks/ that define them: a scheme added there is offered without another edit.
import { describe, expect, it } from 'vitest';
import { HANDSHAKE_SCHEMES } from '../../src/webhooks/handshake.js';
import { SIGNATURE_SCHEMES } from '../../src/webhooks/signature-description.js';
import { compileXml } from './helpers.js';

/** The names after "Use one of" in the one diagnostic of `code`. */
function offered(code: string, element: string): string[] {
  const result = compileXml(`<endpoint-folder>\n  <endpoint name="e">\n    ${element}\n  </endpoint>\n</endpoint-folder>\n`, {}, { env: { SECRET: 's3cret' } });
  const diagnostics = result.diagnostics.filter((d) => d.code === code);
  expect(diagnostics.map((d) => [d.line, d.column])).toEqual([[3, 16]]);
  const list = /Use one of ([^.]*)\./.exec(diagnostics[0]!.message);
  expect(list, diagnostics[0]!.message).not.toBeNull();
  return list![1]!.split(', ');
}

describe('the schemes an unknown one is answered with', () => {
  it('are every signature scheme', () => {
    expect(offered('unknown-signature-scheme', '<signature scheme="paddle-billing" secret="${env:SECRET}"/>')).toEqual([...SIGNATURE_SCHEMES]);
  });

  it('are every handshake scheme', () => {
    expect(offered('unknown-handshake-scheme', '<handshake scheme="paddle-billing"/>')).toEqual([...HANDSHAKE_SCHEMES]);
  });
});
