// `endpoint-service deliveries list|show|replay`: the delivery log read from its store, in text
// or JSON (docs/deliveries.md, "The command line"). Exit codes: 0 done, 2 usage (and --reveal without
// the key that opens the request), 3 nothing to act on (no such delivery, or its request was
// not kept), 4 the store cannot be reached or no running serve took the replay.

import type { Command } from 'commander';
import { deliveriesKey } from '../deliveries/key.js';
import { NoStoreYet, openDeliveryStore } from '../deliveries/open.js';
import type { DeliveryRecord, KeptRequest, Verdict } from '../deliveries/record.js';
import { unsealRequest } from '../deliveries/sealed-request.js';
import type { DeliveryStore } from '../deliveries/store.js';
import { describeError } from '../errors.js';
import type { ExitCode } from './action.js';
import { resolveDeliveryStore, type DeliveryStoreFlags } from './deliveries-options.js';
import { usageOf } from './option-parsers.js';
import { adminToken, TOKEN_ENV } from '../admin/auth.js';

export interface DeliveriesFlags extends DeliveryStoreFlags {
  format: 'text' | 'json';
  endpoint?: string;
  verdict?: Verdict;
  since?: number;
  limit?: number;
  reveal?: boolean;
}

export interface DeliveriesServeFlags extends DeliveryStoreFlags {
  port: number;
  host: string;
}

const NOT_FOUND: ExitCode = 3;
const UNREACHABLE: ExitCode = 4;
/** How long `replay` waits for a running serve to take its ticket and answer. */
const REPLAY_WAIT_MS = 20_000;

export async function listDeliveries(flags: DeliveriesFlags, command: Command): Promise<ExitCode> {
  return withStore(flags, command, async (store) => {
    const records =
      store === null
        ? []
        : await store.list({
            ...(flags.endpoint !== undefined ? { endpoint: flags.endpoint } : {}),
            ...(flags.verdict !== undefined ? { verdict: flags.verdict } : {}),
            ...(flags.since !== undefined ? { since: Date.now() - flags.since } : {}),
            limit: flags.limit ?? 50,
          });
    if (flags.format === 'json') process.stdout.write(`${JSON.stringify({ deliveries: records }, null, 2)}\n`);
    else if (records.length === 0) process.stdout.write('no deliveries\n');
    else for (const record of records) process.stdout.write(line(record));
    return 0;
  });
}

export async function showDelivery(id: string, flags: DeliveriesFlags, command: Command): Promise<ExitCode> {
  return withStore(flags, command, async (store, location) => {
    const stored = store === null ? null : await store.get(id);
    if (stored === null) return notFound(id);
    let revealed: KeptRequest | null = null;
    if (flags.reveal === true) {
      if (stored.sealed === null) {
        process.stderr.write(
          `endpoint-service: the request of delivery ${id} was not kept (too large, refused before its body was read, or recorded without a key)\n`,
        );
        return NOT_FOUND;
      }
      const key = deliveriesKey(process.env, location.kind === 'sqlite' ? location.stateDir : null, false);
      if (key.kind !== 'key') return usageOf(command)(`--reveal needs the key the log was sealed with: ${key.kind === 'none' ? key.why : key.problem}`);
      try {
        revealed = unsealRequest(key.keys, id, stored.sealed);
      } catch {
        return usageOf(command)(
          `the request of delivery ${id} cannot be opened with ${key.source}: it was sealed under another key. Set ENDPOINT_SERVICE_DELIVERIES_KEY to the key serve ran with`,
        );
      }
    }
    if (flags.format === 'json') {
      const document = revealed === null ? stored.record : { ...stored.record, revealed: revealedJson(revealed) };
      process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    } else {
      process.stdout.write(detail(stored.record));
      if (revealed !== null) process.stdout.write(revealedText(revealed));
    }
    return 0;
  });
}

export async function replayDelivery(id: string, flags: DeliveriesFlags, command: Command): Promise<ExitCode> {
  return withStore(flags, command, async (store) => {
    const stored = store === null ? null : await store.get(id);
    if (store === null || stored === null) return notFound(id);
    if (stored.sealed === null) {
      process.stderr.write(
        `endpoint-service: delivery ${id} cannot be replayed: its request was not kept (too large, refused before its body was read, or recorded without a key)\n`,
      );
      return NOT_FOUND;
    }
    const ticket = await store.requestReplay(id);
    const outcome = await waitFor(() => store.replayOutcome(ticket), REPLAY_WAIT_MS);
    if (outcome === null) {
      process.stderr.write(
        `endpoint-service: no running serve took the replay within ${REPLAY_WAIT_MS / 1000} s: a replay is sent by a serve that records into this store (start one, and the request waits for it)\n`,
      );
      return UNREACHABLE;
    }
    if (!outcome.ok) {
      process.stderr.write(`endpoint-service: ${outcome.error}\n`);
      return NOT_FOUND;
    }
    // Written by the serve that answered it, within its batch window.
    const replayed = await waitFor(() => store.get(outcome.delivery), 5_000);
    if (flags.format === 'json') process.stdout.write(`${JSON.stringify(replayed?.record ?? { id: outcome.delivery, replayOf: id }, null, 2)}\n`);
    else if (replayed !== null) process.stdout.write(detail(replayed.record));
    else process.stdout.write(`replayed as ${outcome.delivery}\n`);
    return 0;
  });
}

async function waitFor<T>(read: () => Promise<T | null>, ms: number): Promise<T | null> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== null || Date.now() >= until) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `run` gets null when the embedded log has no file yet (nothing recorded). */
async function withStore(
  flags: DeliveriesFlags,
  command: Command,
  run: (store: DeliveryStore | null, location: NonNullable<ReturnType<typeof resolveDeliveryStore>>) => Promise<ExitCode>,
): Promise<ExitCode> {
  const usage = usageOf(command);
  const location = resolveDeliveryStore(flags, null, usage);
  if (location === null) return usage('--deliveries none records nothing: name the store serve records in, or leave the option out for the embedded one');
  let store: DeliveryStore | null;
  try {
    store = await openDeliveryStore(location, false);
  } catch (error) {
    if (error instanceof NoStoreYet) store = null;
    else {
      process.stderr.write(`endpoint-service: the delivery log cannot be read: ${describeError(error)}\n`);
      return UNREACHABLE;
    }
  }
  try {
    return await run(store, location);
  } catch (error) {
    process.stderr.write(`endpoint-service: the delivery log cannot be read: ${describeError(error)}\n`);
    return UNREACHABLE;
  } finally {
    await store?.close().catch(() => {});
  }
}

function notFound(id: string): ExitCode {
  process.stderr.write(`endpoint-service: there is no delivery ${id} in the log\n`);
  return NOT_FOUND;
}

function taskSummary(record: DeliveryRecord): string {
  return record.tasks.map((t) => `${t.id} ${t.state}`).join(', ');
}

function line(record: DeliveryRecord): string {
  const reason = record.reason !== null ? `  ${record.reason}` : '';
  const tasks = record.tasks.length > 0 ? `  tasks: ${taskSummary(record)}` : '';
  return `${record.receivedAt}  ${record.id}  ${record.endpoint}  ${record.method} ${record.status}  ${record.verdict}${reason}${tasks}\n`;
}

function detail(record: DeliveryRecord): string {
  const rows: [string, string][] = [
    ['received', `${record.receivedAt}  ${record.method} ${record.path} from ${record.client}`],
    ['endpoint', record.endpoint],
    ['verdict', `${record.verdict} (${record.status}) in ${record.durationMs} ms`],
  ];
  if (record.reason !== null) rows.push(['reason', record.reason]);
  if (record.deduplicationKey !== null) rows.push(['deduplication key', record.deduplicationKey]);
  if (record.replayOf !== null) rows.push(['replay of', record.replayOf]);
  if (record.job !== null) rows.push(['queue job', record.job]);
  rows.push(['request', record.request === 'sealed' ? 'kept, sealed (--reveal shows it)' : 'not kept']);
  const width = Math.max(...rows.map(([name]) => name.length));
  let text = `delivery ${record.id}\n`;
  for (const [name, value] of rows) text += `  ${name.padEnd(width)}  ${value}\n`;
  for (const t of record.tasks) {
    const parts = [t.state, `${t.attempts} attempt${t.attempts === 1 ? '' : 's'}`];
    if (t.status !== null) parts.push(`status ${t.status}`);
    if (t.durationMs !== null) parts.push(`${t.durationMs} ms`);
    if (t.error !== null) parts.push(t.error);
    text += `  task ${t.id} (${t.kind}): ${parts.join(', ')}\n`;
  }
  return text;
}

function revealedJson(request: KeptRequest) {
  const text = request.body.toString('utf8');
  const utf8 = Buffer.from(text, 'utf8').equals(request.body);
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    body: utf8 ? text : request.body.toString('base64'),
    bodyEncoding: utf8 ? 'utf8' : 'base64',
  };
}

function revealedText(request: KeptRequest): string {
  const shown = revealedJson(request);
  let text = `request\n  ${request.method} ${request.url}\n`;
  for (const [name, value] of request.headers) text += `  ${name}: ${value}\n`;
  text += `\n${shown.bodyEncoding === 'utf8' ? shown.body : `(${request.body.length} bytes, base64) ${shown.body}`}\n`;
  return text;
}

/** `deliveries serve`: the page alone, until SIGTERM or SIGINT. */
export async function serveDeliveries(flags: DeliveriesServeFlags, command: Command): Promise<ExitCode> {
  const usage = usageOf(command);
  const location = resolveDeliveryStore(flags, null, usage);
  if (location === null) return usage('--deliveries none records nothing: name the store serve records in');
  let store: DeliveryStore;
  try {
    store = await openDeliveryStore(location, true);
  } catch (error) {
    process.stderr.write(`endpoint-service: the delivery log cannot be read: ${describeError(error)}\n`);
    return UNREACHABLE;
  }
  const key = deliveriesKey(process.env, location.kind === 'sqlite' ? location.stateDir : null, false);
  const madeToken = (process.env[TOKEN_ENV] ?? '').trim() === '';
  const token = adminToken(process.env);
  const { startAdmin } = await import('../admin/server.js');
  let page;
  try {
    page = await startAdmin(flags.host, flags.port, {
      store,
      keys: key.kind === 'key' ? key.keys : null,
      token,
      queue: null,
      example: () => null,
      endpoints: [],
      log: (level, message, fields) => process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields })}\n`),
    });
  } catch (error) {
    await store.close().catch(() => {});
    process.stderr.write(`endpoint-service: the page cannot listen on ${flags.host}:${flags.port}: ${describeError(error)}\n`);
    return 2;
  }
  process.stdout.write(`endpoint-service deliveries page on ${page.url}\n`);
  process.stderr.write(madeToken ? `log in at ${page.loginUrl}\n` : `log in with ${TOKEN_ENV}: ${page.url}?token=…\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await page.close();
  await store.close().catch(() => {});
  return 0;
}
