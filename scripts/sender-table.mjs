// Writes the table of named senders into docs/language.md from the catalogue (src/webhooks/senders.ts),
// between its markers. Run after `npm run build`: node scripts/sender-table.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TABLE_END, TABLE_START, renderSenderTable } from '../dist/webhooks/sender-table.js';

const file = fileURLToPath(new URL('../docs/language.md', import.meta.url));
const text = readFileSync(file, 'utf8');
const start = text.indexOf(TABLE_START);
const end = text.indexOf(TABLE_END);
if (start < 0 || end < start) throw new Error(`docs/language.md has no ${TABLE_START} … ${TABLE_END} section`);
writeFileSync(file, text.slice(0, start) + renderSenderTable() + text.slice(end + TABLE_END.length));
console.log('docs/language.md: the table of named senders is written');
