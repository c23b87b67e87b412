// A request body's share of --max-inflight-body-size and its temporary files are given back on
// every way a request can end (docs/behaviour.md, "Request bodies and uploads"): answered before
// its body was read, refused in the middle of it, timed out while it still arrived, the client
// gone, the socket reset. Then the budget charges what arrived, not what a header declares, and
// one client address holds at most its share of it. The real binary, raw sockets (fetch would
// neither stall a body nor leave it unsent), the gauge read from /_metrics, the temporary folder
// read from disk.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';

const APP = fixture('uploads');
const MiB = 1024 * 1024;
const IN_FLIGHT = 'endpoint_service_request_body_bytes_in_flight';
const WAITING = 'endpoint_service_request_body_waiting';
const REFUSALS = 'endpoint_service_request_body_refusals_total';

let peer: HttpPeer;
let smtp: SmtpPeer;
const scratch: string[] = [];
const sockets: Socket[] = [];

function uploadDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'body-release-test-'));
  scratch.push(dir);
  return dir;
}

/** The temporary files in `dir`'s process folders; a file removed while this looks is gone. */
function tempFiles(dir: string): { path: string; size: number }[] {
  return readdirSync(dir).flatMap((folder) =>
    readdirSync(path.join(dir, folder)).flatMap((name) => {
      const stat = statSync(path.join(dir, folder, name), { throwIfNoEntry: false });
      return stat === undefined ? [] : [{ path: name, size: stat.size }];
    }),
  );
}

/** Polls until `check` holds; the test's own timeout bounds the wait. */
async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await sleep(20);
}

async function metric(service: RunningService, name: string): Promise<number> {
  const text = await (await fetch(`${service.url}/_metrics`, { headers: { connection: 'close' } })).text();
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (match === null) throw new Error(`/_metrics has no ${name}`);
  return Number(match[1]);
}

interface Client {
  readonly socket: Socket;
  /** The status of the first final answer, once its head has arrived; null if the connection closed without one. */
  readonly status: Promise<number | null>;
  /** A `100 Continue` arrived: the service has taken up the request (sent with `Expect: 100-continue`). */
  readonly continued: Promise<void>;
  readonly closed: Promise<void>;
}

/** A raw connection that sends `bytes` and keeps the connection open (from `localAddress` when given). */
function open(service: RunningService, bytes: string | Buffer, localAddress?: string): Client {
  const { port, hostname } = new URL(service.url);
  const socket = connect({ port: Number(port), host: hostname, ...(localAddress === undefined ? {} : { localAddress }) });
  sockets.push(socket);
  socket.on('error', () => {});
  let text = '';
  let onContinue!: () => void;
  const continued = new Promise<void>((resolve) => (onContinue = resolve));
  const status = new Promise<number | null>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      for (;;) {
        const m = /^HTTP\/1\.1 (\d{3}) [^\r]*\r\n(?:[^\r]+\r\n)*\r\n/.exec(text);
        if (m === null) return;
        if (m[1] !== '100') return resolve(Number(m[1]));
        onContinue();
        text = text.slice(m[0].length);
      }
    });
    socket.once('close', () => resolve(null));
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(bytes);
  return { socket, status, continued, closed };
}

const jsonHead = (length: number, extra = '') =>
  `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;
const jsonOf = (length: number) => `{"name":"${'j'.repeat(length - 11)}"}`;

const BOUNDARY = 'release-boundary';
function fileHead(name = 'upload.bin'): string {
  return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
}
function multipartHead(endpoint: string, length: number): string {
  return `POST /${endpoint} HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${length}\r\n\r\n`;
}

/** A legitimate small form post, answered whole. */
async function legitimatePost(service: RunningService, localAddress?: string): Promise<number | null> {
  const body = jsonOf(100);
  const client = open(service, jsonHead(body.length, 'Connection: close\r\n') + body, localAddress);
  return client.status;
}

beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/gate', { status: 200, body: 'open' });
  smtp = await SmtpPeer.start();
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await peer?.close();
  await smtp?.close();
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

describe('a body still arriving when --request-timeout fires', () => {
  let service: RunningService;
  let dir: string;

  beforeAll(async () => {
    dir = uploadDir();
    service = await startServe(APP, ['--smtp-url', smtp.url, '--request-timeout', '1s', '--max-body-size', '10MiB', '--upload-dir', dir], {
      PEER: peer.origin,
    });
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('gives back the charge of a half-sent form at the 503, while its client still holds the connection', async () => {
    const body = jsonOf(60_000);
    const client = open(service, jsonHead(body.length) + body.slice(0, 30_000));
    expect(await client.status).toBe(503);
    await eventually(async () => (await metric(service, IN_FLIGHT)) === 0);
    // The service closes the connection, whatever the client goes on sending.
    client.socket.write(body.slice(30_000, 40_000));
    await client.closed;
    expect(await metric(service, IN_FLIGHT)).toBe(0);
    expect(await metric(service, WAITING)).toBe(0);
  });

  it('gives back the budget of 26 header-only connections declaring 10 MiB, held past the timeout and closed: a later POST is answered at once', async () => {
    const held = Array.from({ length: 26 }, () => open(service, jsonHead(10 * MiB)));
    expect(await Promise.all(held.map((c) => c.status))).toEqual(held.map(() => 503));
    for (const client of held) client.socket.destroy();
    await Promise.all(held.map((c) => c.closed));
    await eventually(async () => (await metric(service, IN_FLIGHT)) === 0);
    expect(await metric(service, WAITING)).toBe(0);
    const refusals = await metric(service, REFUSALS);
    expect(await legitimatePost(service)).toBe(200);
    expect(await metric(service, REFUSALS)).toBe(refusals);
  });

  it('removes the temporary files of uploads still arriving, and gives back their charge', async () => {
    const size = 5 * MiB;
    const head = fileHead();
    const tail = `\r\n--${BOUNDARY}--\r\n`;
    const uploads = Array.from({ length: 3 }, () => open(service, multipartHead('mail', head.length + size + tail.length) + head));
    for (const upload of uploads) upload.socket.write(randomBytes(2 * MiB));
    await eventually(() => tempFiles(dir).filter((f) => f.size > 64 * 1024).length === 3);
    expect(await Promise.all(uploads.map((u) => u.status))).toEqual([503, 503, 503]);
    for (const upload of uploads) upload.socket.destroy();
    await eventually(() => tempFiles(dir).length === 0);
    await eventually(async () => (await metric(service, IN_FLIGHT)) === 0);
  });

  it('logs no unexpected error for a timed-out body', () => {
    expect(service.logs().filter((l) => l.msg === 'unexpected error while answering a request')).toEqual([]);
  });
});

describe('a body whose request ends another way', () => {
  let service: RunningService;
  let dir: string;

  beforeAll(async () => {
    dir = uploadDir();
    service = await startServe(APP, ['--smtp-url', smtp.url, '--max-body-size', '10MiB', '--upload-dir', dir], { PEER: peer.origin });
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('answered before its body is read (415, 413 from the declared length): nothing is charged while the client goes on sending', async () => {
    const unsupported = open(service, `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n${'t'.repeat(50_000)}`);
    expect(await unsupported.status).toBe(415);
    const tooLarge = open(service, jsonHead(11 * MiB) + 'x'.repeat(50_000));
    expect(await tooLarge.status).toBe(413);
    expect(await metric(service, IN_FLIGHT)).toBe(0);
    unsupported.socket.write('t'.repeat(50_000));
    tooLarge.socket.write('x'.repeat(50_000));
    unsupported.socket.destroy();
    tooLarge.socket.destroy();
    expect(await metric(service, IN_FLIGHT)).toBe(0);
  });

  it('refused in the middle (more than 20 files after a large one): its file is removed, its charge given back', async () => {
    const parts = [fileHead('big.bin'), randomBytes(MiB), '\r\n'];
    for (let i = 0; i < 21; i++) parts.push(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="f${i}"; filename="f${i}.txt"\r\n\r\nx\r\n`);
    parts.push(`--${BOUNDARY}--\r\n`);
    const body = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
    const client = open(service, Buffer.concat([Buffer.from(multipartHead('mail', body.length)), body]));
    expect(await client.status).toBe(413);
    client.socket.destroy();
    await eventually(() => tempFiles(dir).length === 0);
    await eventually(async () => (await metric(service, IN_FLIGHT)) === 0);
  });

  it('client gone: a form and an upload closed half sent', async () => {
    const body = jsonOf(60_000);
    const form = open(service, jsonHead(body.length) + body.slice(0, 30_000));
    const upload = open(service, multipartHead('mail', 4 * MiB) + fileHead());
    upload.socket.write(randomBytes(MiB));
    await eventually(() => tempFiles(dir).some((f) => f.size > 64 * 1024));
    await eventually(async () => (await metric(service, IN_FLIGHT)) >= 30_000);
    form.socket.end();
    upload.socket.end();
    await eventually(() => tempFiles(dir).length === 0);
    await eventually(async () => (await metric(service, IN_FLIGHT)) === 0);
  });

  it('socket reset: an upload whose connection is reset half sent', async () => {
    const upload = open(service, multipartHead('mail', 4 * MiB) + fileHead());
    upload.socket.write(randomBytes(MiB));
    await eventually(() => tempFiles(dir).some((f) => f.size > 64 * 1024));
    upload.socket.resetAndDestroy();
    await eventually(() => tempFiles(dir).length === 0);
    await eventually(async () => (await metric(service, IN_FLIGHT)) === 0);
  });
});

describe('a raw body kept for a task that forwards it', () => {
  let service: RunningService;
  let dir: string;

  beforeAll(async () => {
    dir = uploadDir();
    service = await startServe(APP, ['--smtp-url', smtp.url, '--max-body-size', '10MiB', '--upload-dir', dir], { PEER: peer.origin });
  });
  afterAll(async () => {
    await service?.stop();
  });

  const rawHead = (length: number) =>
    `POST /relay HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;

  it('is in a temporary file while its task runs, removed and its charge given back when the task is done', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    peer.route('/relay-held', { status: 200, body: 'ok', hold: () => held });
    const before = peer.requestsTo('/relay-held').length;
    const body = randomBytes(2 * MiB);
    const client = open(service, Buffer.concat([Buffer.from(rawHead(body.length)), body]));
    await peer.waitForRequests(before + 1, '/relay-held');
    expect(tempFiles(dir).map((f) => f.size)).toEqual([2 * MiB]);
    release();
    expect(await client.status).toBe(200);
    await eventually(() => tempFiles(dir).length === 0);
    await eventually(async () => (await metric(service, IN_FLIGHT)) === 0);
  });

  it('client gone half sent: its file is removed, its charge given back, nothing is forwarded', async () => {
    const before = peer.requestsTo('/relay-held').length;
    const client = open(service, rawHead(4 * MiB));
    client.socket.write(randomBytes(MiB));
    await eventually(() => tempFiles(dir).some((f) => f.size > 64 * 1024));
    client.socket.end();
    await eventually(() => tempFiles(dir).length === 0);
    await eventually(async () => (await metric(service, IN_FLIGHT)) === 0);
    expect(peer.requestsTo('/relay-held')).toHaveLength(before);
  });
});

describe('the budget charges what arrives', () => {
  it('50 header-only connections declaring 10 MiB hold nothing, and a POST meanwhile is answered at once', async () => {
    const service = await startServe(APP, ['--smtp-url', smtp.url, '--max-body-size', '10MiB', '--upload-dir', uploadDir()], { PEER: peer.origin });
    try {
      const expect100 = 'Expect: 100-continue\r\n';
      const held = Array.from({ length: 50 }, () => open(service, jsonHead(10 * MiB, expect100)));
      const multipart = Array.from({ length: 5 }, () => open(service, multipartHead('mail', 10 * MiB).replace('\r\n\r\n', `\r\n${expect100}\r\n`)));
      // Every one of them has been taken up by the service (its 100 Continue) before the check.
      await Promise.all([...held, ...multipart].map((c) => c.continued));
      expect(await metric(service, IN_FLIGHT)).toBe(0);
      expect(await legitimatePost(service)).toBe(200);
      expect(await metric(service, REFUSALS)).toBe(0);
      for (const client of [...held, ...multipart]) client.socket.destroy();
    } finally {
      await service.stop();
    }
  });

  it('one client address holds at most its share: another address is answered at once while it stalls', async () => {
    // Budget 256 KiB, largest body 64 KiB: an address may hold 64 KiB (a quarter, at least the largest body).
    const service = await startServe(
      APP,
      ['--smtp-url', smtp.url, '--max-body-size', '64KiB', '--max-inflight-body-size', '256KiB', '--upload-dir', uploadDir()],
      { PEER: peer.origin },
    );
    try {
      const body = jsonOf(65_536);
      // Four bodies from one address, each sent but its last byte: together they would fill the
      // whole budget. The first fits the address's share; the other three wait for it.
      const stalled = [open(service, jsonHead(body.length) + body.slice(0, -1), '127.0.0.1')];
      await eventually(async () => (await metric(service, IN_FLIGHT)) === 65_535);
      for (let i = 0; i < 3; i++) stalled.push(open(service, jsonHead(body.length) + body.slice(0, -1), '127.0.0.1'));
      await eventually(async () => (await metric(service, WAITING)) === 3);
      // Another address does not wait behind them.
      expect(await legitimatePost(service, '127.0.0.2')).toBe(200);
      // The three that waited for their own address's room are refused.
      expect(await Promise.all(stalled.slice(1).map((c) => c.status))).toEqual([503, 503, 503]);
      stalled[0]!.socket.destroy();
      await eventually(async () => (await metric(service, IN_FLIGHT)) === 0);
    } finally {
      await service.stop();
    }
  });
});
