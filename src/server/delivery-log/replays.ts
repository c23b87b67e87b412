// `deliveries replay ID` asks through the store (a ticket); a running serve takes it and sends
// the kept request to its own listening address, so the replay goes through the application as
// it is configured now, by the same code as any request: the body read and parsed, the signature
// checked, the tasks run or queued. Its ReplayGate mark makes it a replay (../exchange.ts). Every
// process of every instance polls; the store gives each ticket to one of them.

import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { describeError } from '../../errors.js';
import type { QueueKey } from '../../queue/seal.js';
import { unsealRequest } from '../../deliveries/sealed-request.js';
import type { DeliveryStore, ReplayOutcome } from '../../deliveries/store.js';
import type { Logger } from '../log.js';
import { REPLAY_HEADER, type ReplayGate } from './replay-gate.js';

const POLL_MS = 500;
const SEND_TIMEOUT_MS = 60_000;
/** Set again for the replay, or meaningless on a new connection. */
const NOT_SENT = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'expect', 'te', 'trailer', REPLAY_HEADER]);

export interface Replayer {
  stop(): void;
}

/** `origin`: where this process listens (a wildcard address made loopback). */
export function replayFromLog(store: DeliveryStore, keys: readonly QueueKey[], gate: ReplayGate, origin: URL, logger: Logger): Replayer {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void takeOne(store, keys, gate, origin, logger).finally(() => (busy = false));
  }, POLL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

async function takeOne(store: DeliveryStore, keys: readonly QueueKey[], gate: ReplayGate, origin: URL, logger: Logger): Promise<void> {
  let ticket;
  try {
    ticket = await store.claimReplay();
  } catch {
    // The store is down: the delivery log says so already, and the ticket waits.
    return;
  }
  if (ticket === null) return;
  const outcome = await replay(store, keys, gate, origin, ticket.delivery);
  logger.log(outcome.ok ? 'info' : 'warn', 'delivery replayed', {
    replayOf: ticket.delivery,
    ...(outcome.ok ? { requestId: outcome.delivery } : { error: outcome.error }),
  });
  try {
    await store.finishReplay(ticket.ticket, outcome);
  } catch (error) {
    logger.log('warn', 'the outcome of a replay could not be stored', { replayOf: ticket.delivery, error: describeError(error) });
  }
}

async function replay(store: DeliveryStore, keys: readonly QueueKey[], gate: ReplayGate, origin: URL, id: string): Promise<ReplayOutcome> {
  const stored = await store.get(id).catch(() => null);
  if (stored === null) return { ok: false, error: `there is no delivery ${id}` };
  if (stored.sealed === null)
    return {
      ok: false,
      error: `the request of delivery ${id} was not kept (too large, refused before its body was read, or no sealing key), so it cannot be sent again`,
    };
  let kept;
  try {
    kept = unsealRequest(keys, id, stored.sealed);
  } catch {
    return {
      ok: false,
      error: `the request of delivery ${id} cannot be opened with this service's key (sealed under another ENDPOINT_SERVICE_DELIVERIES_KEY)`,
    };
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of kept.headers) {
    const lower = name.toLowerCase();
    if (NOT_SENT.has(lower)) continue;
    const before = headers[lower];
    headers[lower] = before === undefined ? value : Array.isArray(before) ? [...before, value] : [before, value];
  }
  headers[REPLAY_HEADER] = gate.header(id);
  headers['content-length'] = String(kept.body.length);
  return new Promise((resolve) => {
    // The request line as received, to this service's own address whatever it says.
    const target = {
      hostname: origin.hostname.replace(/^\[|\]$/g, ''),
      port: origin.port,
      path: kept.url,
      method: kept.method,
      headers,
      timeout: SEND_TIMEOUT_MS,
    };
    const sent = httpRequest(target, (response) => {
      response.resume();
      const requestId = (response.headers as IncomingHttpHeaders)['x-request-id'];
      resolve(
        typeof requestId === 'string'
          ? { ok: true, delivery: requestId }
          : { ok: false, error: `the replay was answered ${response.statusCode} without a request id` },
      );
    });
    sent.on('timeout', () => sent.destroy(new Error('no answer within 60 s')));
    sent.on('error', (error) => resolve({ ok: false, error: `the replay could not be sent: ${describeError(error)}` }));
    sent.end(kept.body);
  });
}
