import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { decodeBatch, encodeBatch, transferable, type WireBatch } from '../../src/deliveries/entry-wire.js';
import type { LogEntry } from '../../src/deliveries/log-entry.js';
import { handOver } from '../../src/deliveries/writer.js';

const task = {
  id: 'notify',
  kind: 'http-request',
  state: 'failed',
  attempts: 3,
  status: 502,
  error: 'task "notify" failed: HTTP_502',
  durationMs: 12.5,
} as const;

const entries: LogEntry[] = [
  {
    kind: 'delivery',
    record: {
      id: '019ac6a1-2b3c-7def-8123-456789abcdef',
      receivedAt: '2026-11-27T20:30:00.123Z',
      endpoint: 'contact',
      method: 'POST',
      path: '/contact',
      client: '203.0.113.7',
      verdict: 'failed',
      status: 502,
      reason: 'a task failed: "notify"',
      durationMs: 14.2,
      deduplicationKey: 'evt_1',
      replayOf: '019ac6a0-0000-7000-8000-000000000000',
      job: '17',
      tasks: [task],
      request: 'sealed',
    },
    request: {
      method: 'POST',
      url: '/contact?x=%C3%A9',
      rawHeaders: ['Host', 'a', 'X-Latin', 'caf\u00e9', 'Cookie', 's=1'],
      body: Uint8Array.from([0, 1, 2, 255]),
    },
  },
  {
    kind: 'delivery',
    record: {
      id: 'r2',
      receivedAt: '2026-11-27T20:30:00.200Z',
      endpoint: 'ping',
      method: 'GET',
      path: '/ping',
      client: '::1',
      verdict: 'accepted',
      status: 200,
      reason: null,
      durationMs: 0.3,
      deduplicationKey: null,
      replayOf: null,
      job: null,
      tasks: [],
      request: 'not-kept',
    },
    request: null,
  },
  { kind: 'task', delivery: 'r0', task },
];

describe('log entries on their way to the writer thread', () => {
  it('arrive as they were sent, bodies included, through a real message port', () => {
    const batch = encodeBatch(entries);
    const { port1, port2 } = new MessageChannel();
    port1.postMessage(batch, transferable(batch));
    const received = receiveMessageOnPort(port2)!.message as WireBatch;
    port1.close();
    const decoded = decodeBatch(received);
    expect(decoded.length).toBe(3);
    expect(decoded[0]).toEqual({ ...entries[0], request: { ...(entries[0] as { request: object }).request, body: Uint8Array.from([0, 1, 2, 255]) } });
    expect(Buffer.from((decoded[0] as { request: { body: Uint8Array } }).request.body)).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(decoded[1]).toEqual(entries[1]);
    expect(decoded[2]).toEqual(entries[2]);
  });

  it('move a body that owns its memory, and copy one that shares it', () => {
    const own = Buffer.allocUnsafeSlow(3).fill(7);
    const shared = Buffer.from('pooled');
    const captured = (body: Uint8Array): LogEntry => ({ ...entries[0]!, request: { method: 'POST', url: '/', rawHeaders: [], body } }) as LogEntry;
    const batch = encodeBatch([captured(own), captured(shared)]);
    expect(transferable(batch)).toEqual([own.buffer]);
  });
});

describe('a batch handed to the writer thread', () => {
  it('goes through the shared memory when it fits, and in the message when it does not', () => {
    const shared = Buffer.from(new SharedArrayBuffer(64));
    const small = '["caf\u00e9 \u2713"]';
    const handed = handOver(small, shared);
    expect(handed).toEqual({ sharedBytes: Buffer.byteLength(small) });
    expect(shared.toString('utf8', 0, (handed as { sharedBytes: number }).sharedBytes)).toBe(small);
    // 30 units, 76 bytes of UTF-8: more than the memory holds, though its length is not.
    const large = '\u2713'.repeat(23) + '1234567';
    expect(handOver(large, shared)).toBe(large);
    const exact = 'x'.repeat(64);
    expect(handOver(exact, shared)).toEqual({ sharedBytes: 64 });
  });
});
