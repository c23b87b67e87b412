// docs/diagnostics.md is what users read to script against codes: every code must be there.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { DIAGNOSTICS } from '../../src/compiler/diagnostics.js';

const doc = readFileSync(fileURLToPath(new URL('../../docs/diagnostics.md', import.meta.url)), 'utf8');
// The "-serve" entries are the same public code raised with another severity.
const publicCodes = Object.keys(DIAGNOSTICS).filter((c) => !c.endsWith('-serve'));

it.each(publicCodes)('docs/diagnostics.md documents %s', (code) => {
  expect(doc).toContain(`\`${code}\``);
});
