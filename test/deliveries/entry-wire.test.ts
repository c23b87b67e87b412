import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { decodeBatch, encodeBatch, transferable, type WireBatch } from '../../src/deliveries/entry-wire.js';
import type { LogEntry } from '../../src/deliveries/log-entry.js';

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
      body: [Uint8Array.from([0, 1, 2]), Uint8Array.from([255, 3])],
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

const bodyOf = (entry: LogEntry | undefined) => Buffer.concat((entry as unknown as { request: { body: Uint8Array[] } }).request.body);

describe('log entries on their way to the writer thread', () => {
  it('arrive as they were sent, through a real message port and the shared memory', () => {
    const shared = Buffer.from(new SharedArrayBuffer(4096));
    const batch = encodeBatch(entries, shared);
    expect(typeof batch.text).toBe('object');
    expect(batch.bodies).toEqual([]);
    const { port1, port2 } = new MessageChannel();
    port1.postMessage(batch, transferable(batch));
    const received = receiveMessageOnPort(port2)!.message as WireBatch;
    port1.close();
    const decoded = decodeBatch(received, shared);
    expect(decoded.length).toBe(3);
    expect(bodyOf(decoded[0])).toEqual(Buffer.from([0, 1, 2, 255, 3]));
    expect({ ...decoded[0], request: { ...(decoded[0] as { request: object }).request, body: null } }).toEqual({
      ...entries[0],
      request: { ...(entries[0] as { request: object }).request, body: null },
    });
    expect(decoded[1]).toEqual(entries[1]);
    expect(decoded[2]).toEqual(entries[2]);
  });

  it('sends in the message what does not fit in the shared memory, bodies moved and text copied', () => {
    const shared = Buffer.from(new SharedArrayBuffer(4));
    const batch = encodeBatch(entries, shared);
    expect(typeof batch.text).toBe('string');
    expect(batch.bodies.map((b) => Buffer.from(b))).toEqual([Buffer.from([0, 1, 2, 255, 3])]);
    expect(transferable(batch)).toEqual([batch.bodies[0]!.buffer]);
    const { port1, port2 } = new MessageChannel();
    port1.postMessage(batch, transferable(batch));
    const decoded = decodeBatch(receiveMessageOnPort(port2)!.message as WireBatch, shared);
    port1.close();
    expect(bodyOf(decoded[0])).toEqual(Buffer.from([0, 1, 2, 255, 3]));
    expect(decoded[2]).toEqual(entries[2]);
  });

  it('places the text after the bodies, and measures a text of more bytes than characters before giving up', () => {
    const two = [entries[0]!, entries[1]!];
    const { bytes } = encodeBatch(two, Buffer.from(new SharedArrayBuffer(4096))).text as { at: number; bytes: number };
    expect(encodeBatch(two, Buffer.from(new SharedArrayBuffer(5 + bytes))).text).toEqual({ at: 5, bytes });
    const short = encodeBatch(two, Buffer.from(new SharedArrayBuffer(5 + bytes - 1)));
    expect(typeof short.text).toBe('string');
    expect(short.bodies).toEqual([]);
  });
});
