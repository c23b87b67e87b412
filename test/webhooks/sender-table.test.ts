// The table of named senders in docs/language.md ("<signature>") is the catalogue's own rendering
// (src/webhooks/sender-table.ts): a sender added, removed or changed in src/webhooks/senders.ts
// without the document following fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TABLE_END, TABLE_START, renderSenderTable } from '../../src/webhooks/sender-table.js';

describe('docs/language.md', () => {
  it('lists the named senders exactly as the catalogue has them', () => {
    const doc = readFileSync(new URL('../../docs/language.md', import.meta.url), 'utf8');
    const start = doc.indexOf(TABLE_START);
    const end = doc.indexOf(TABLE_END);
    expect(start, 'the table markers').toBeGreaterThan(0);
    // On a difference: `npm run build && node scripts/sender-table.mjs` writes the table again.
    expect(doc.slice(start, end + TABLE_END.length)).toBe(renderSenderTable());
  });
});
