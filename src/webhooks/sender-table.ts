// The table of named senders in docs/language.md ("<signature>", "Named senders"), rendered from
// the catalogue itself (senders.ts): test/webhooks/sender-table.test.ts fails when the document
// and the data differ, and `node scripts/sender-table.mjs` (after a build) writes the table back.

import { SENDERS, type HeaderSet, type SenderEntry } from './senders.js';

export const TABLE_START = '<!-- senders: generated from src/webhooks/senders.ts by scripts/sender-table.mjs -->';
export const TABLE_END = '<!-- senders: end -->';

const WRITTEN: Readonly<Record<string, string>> = { seconds: 'unix seconds', milliseconds: 'unix milliseconds', rfc3339: 'RFC 3339' };
const KEY: Readonly<Record<SenderEntry['key'], string>> = {
  secret: '`secret`, as written',
  whsec: '`secret`: `whsec_` + base64',
  'public-key': '`public-key`',
};

/** The table, one row per entry, between its markers. */
export function renderSenderTable(): string {
  const rows = SENDERS.map((entry) =>
    [
      // The sender first: a row that starts with a code span reads as an attribute to test/language.
      `[${entry.sender}](${entry.reference})`,
      `\`${entry.name}\``,
      headersOf(entry),
      `\`${entry.signed}\``,
      verifiedBy(entry),
      KEY[entry.key],
      toleranceOf(entry),
    ].join(' | '),
  );
  return [
    TABLE_START,
    '| sender | scheme | headers | signed | verified by | key | tolerance |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((row) => `| ${row} |`),
    TABLE_END,
  ].join('\n');
}

function headersOf(entry: SenderEntry): string {
  const [first, ...others] = entry.headers;
  const text = headerSet(entry, first);
  return others.length === 0 ? text : `${text}; or ${others.map((set) => headerSet(entry, set)).join('; or ')}`;
}

function headerSet(entry: SenderEntry, set: HeaderSet): string {
  const value = `<${entry.encoding}>`;
  let signature: string;
  if (entry.field !== undefined) {
    const separator = entry.separator ?? ',';
    signature = `${entry.timestampField === undefined ? '' : `${entry.timestampField}=<ts>${separator}`}${entry.field}=${entry.prefix ?? ''}${value}`;
  } else signature = `${entry.prefix ?? ''}${value}${entry.list === true ? ' […]' : ''}`;
  const names = [set.signature.startsWith('json:') ? `\`${set.signature}\`: \`${signature}\`` : `\`${set.signature}: ${signature}\``];
  if (set.timestamp !== undefined) names.push(`\`${set.timestamp}\` (ts)`);
  if (set.id !== undefined) names.push(`\`${set.id}\` (id)`);
  return names.join(', ');
}

function verifiedBy(entry: SenderEntry): string {
  if (entry.verify === 'ed25519') return 'Ed25519';
  if (entry.verify === 'ecdsa-p256') return 'ECDSA P-256, SHA-256';
  return `HMAC-${(entry.algorithm ?? 'sha256').toUpperCase()}`;
}

function toleranceOf(entry: SenderEntry): string {
  const timed = entry.timestampField !== undefined || entry.headers[0].timestamp !== undefined;
  if (!timed) return '—';
  return `${entry.tolerance ?? '5m'} (${WRITTEN[entry.timestampFormat ?? 'seconds']})`;
}
