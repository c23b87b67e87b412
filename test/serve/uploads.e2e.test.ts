// Uploads seen from outside the process (issue #20; docs/behaviour.md, "`serve`"): which are
// kept, that a large one goes through a temporary file and arrives byte for byte, that no
// temporary file outlives its request however the request ends (success, failure, background,
// client gone, SIGTERM, SIGKILL and a restart), and the budget for bodies in flight.
// The real binary, a real SMTP server and a real HTTP peer whose /gate answers when the test
// lets it, so a request's tasks can be held while the test looks at the folder.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { run } from '../cli/helpers.js';
import { fixture, runServeToExit, startServe, type RunningService } from '../helpers/serve.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';

const APP = fixture('uploads');
const FOLDER = /^endpoint-service-uploads-\d+-\d+-[A-Za-z0-9]+$/;
const NINE_MB = 9 * 1024 * 1024;

let peer: HttpPeer;
let smtp: SmtpPeer;
/** The /gate of the current test: held until opened. */
let gate = newGate();
const scratch: string[] = [];

function newGate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** A fresh --upload-dir, removed after the file's tests. */
function uploadDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'uploads-test-'));
  scratch.push(dir);
  return dir;
}

/** The process folders in `dir` (one per running process). */
function folders(dir: string): string[] {
  return readdirSync(dir).filter((name) => FOLDER.test(name));
}

/**
 * Every temporary file in `dir`'s process folders, with its size. The service removes files while
 * this looks: one listed but gone by the time it is measured is not there any more.
 */
function tempFiles(dir: string): { path: string; size: number }[] {
  return folders(dir).flatMap((folder) =>
    readdirSync(path.join(dir, folder)).flatMap((name) => {
      const file = path.join(dir, folder, name);
      const stat = statSync(file, { throwIfNoEntry: false });
      return stat === undefined ? [] : [{ path: file, size: stat.size }];
    }),
  );
}

/** Polls until `check` holds; the test's own timeout bounds the wait. */
async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await sleep(20);
}

async function metric(service: RunningService, name: string): Promise<number> {
  const text = await (await fetch(`${service.url}/_metrics`)).text();
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (match === null) throw new Error(`/_metrics has no ${name}`);
  return Number(match[1]);
}

function form(fields: Record<string, string>, file?: { name: string; content: Buffer; type?: string }): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.append(name, value);
  if (file) data.append('file', new Blob([new Uint8Array(file.content)], { type: file.type ?? 'application/octet-stream' }), file.name);
  return data;
}

beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/gate', async () => {
    await gate.opened;
    return { status: 200, body: 'open' };
  });
  peer.route('/fail', { status: 500, body: 'down' });
  smtp = await SmtpPeer.start();
});
beforeEach(() => {
  gate = newGate();
});
afterAll(async () => {
  gate.open();
  await peer?.close();
  await smtp?.close();
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

describe('one process, its folder', () => {
  let service: RunningService;
  let dir: string;

  beforeAll(async () => {
    dir = uploadDir();
    service = await startServe(APP, ['--smtp-url', smtp.url, '--upload-dir', dir], { PEER: peer.origin });
  });
  afterEach(() => gate.open());
  afterAll(async () => {
    await service?.stop();
  });

  it('makes one private folder for the process', () => {
    const own = folders(dir);
    expect(own).toHaveLength(1);
    expect(statSync(path.join(dir, own[0]!)).mode & 0o777).toBe(0o700);
  });

  it('mails a 9 MB upload byte for byte through a temporary file, removed once the mail is sent', async () => {
    const content = randomBytes(NINE_MB);
    const before = smtp.messages.length;
    const answer = fetch(`${service.url}/mail?tag=big`, { method: 'POST', body: form({}, { name: 'scan.pdf', content, type: 'application/pdf' }) });
    await peer.waitForRequests(peer.requestsTo('/gate').length + 1, '/gate');
    // The body is read and its task held: the file is on disk, whole, readable by this user only.
    const files = tempFiles(dir);
    expect(files).toHaveLength(1);
    expect(files[0]!.size).toBe(NINE_MB);
    expect(statSync(files[0]!.path).mode & 0o777).toBe(0o600);
    expect(await metric(service, 'endpoint_service_upload_temporary_files')).toBe(1);
    // Only what is in memory counts as in flight: the 9 MB went to the file.
    expect(await metric(service, 'endpoint_service_request_body_bytes_in_flight')).toBeLessThan(256 * 1024);
    gate.open();
    expect((await answer).status).toBe(200);
    const mail = smtp.messages.slice(before).find((m) => m.parsed.subject === 'upload big')!;
    const attachment = mail.parsed.attachments[0]!;
    expect(attachment.filename).toBe('scan.pdf');
    expect(attachment.contentType).toBe('application/pdf');
    expect(attachment.content.equals(content)).toBe(true);
    await eventually(() => tempFiles(dir).length === 0);
    // The count drops once the removal has completed, a moment after the file left the folder.
    await eventually(async () => (await metric(service, 'endpoint_service_upload_temporary_files')) === 0);
    await eventually(async () => (await metric(service, 'endpoint_service_request_body_bytes_in_flight')) === 0);
  });

  it('keeps a small upload in memory: no temporary file', async () => {
    const content = randomBytes(1000);
    const before = smtp.messages.length;
    const answer = fetch(`${service.url}/mail?tag=small`, { method: 'POST', body: form({}, { name: 'note.txt', content }) });
    await peer.waitForRequests(peer.requestsTo('/gate').length + 1, '/gate');
    expect(tempFiles(dir)).toEqual([]);
    gate.open();
    expect((await answer).status).toBe(200);
    const mail = smtp.messages.slice(before).find((m) => m.parsed.subject === 'upload small')!;
    expect(mail.parsed.attachments[0]!.content.equals(content)).toBe(true);
  });

  it('drops an upload no task reads as it arrives, while the form fields still bind', async () => {
    const answer = fetch(`${service.url}/notify`, { method: 'POST', body: form({ name: 'Ann' }, { name: 'big.bin', content: randomBytes(NINE_MB) }) });
    await peer.waitForRequests(peer.requestsTo('/gate').length + 1, '/gate');
    expect(peer.requestsTo('/gate').at(-1)!.query.get('name')).toBe('Ann');
    // Body read, task held: nothing on disk, and the file's bytes are not held in memory either.
    expect(tempFiles(dir)).toEqual([]);
    expect(await metric(service, 'endpoint_service_request_body_bytes_in_flight')).toBeLessThan(256 * 1024);
    gate.open();
    expect((await answer).status).toBe(200);
  });

  it('keeps the uploads of an endpoint that forwards to one whose task mails them', async () => {
    const content = randomBytes(200 * 1024);
    const before = smtp.messages.length;
    const answer = fetch(`${service.url}/forward-to-mail`, { method: 'POST', body: form({ tag: 'forwarded' }, { name: 'f.bin', content }) });
    await peer.waitForRequests(peer.requestsTo('/gate').length + 1, '/gate');
    expect(tempFiles(dir)).toHaveLength(1);
    gate.open();
    expect((await answer).status).toBe(200);
    const mail = smtp.messages.slice(before).find((m) => m.parsed.subject === 'upload forwarded')!;
    expect(mail.parsed.attachments[0]!.content.equals(content)).toBe(true);
    await eventually(() => tempFiles(dir).length === 0);
  });

  it('removes the file when a task fails, and sends nothing', async () => {
    const before = smtp.messages.length;
    const response = await fetch(`${service.url}/mail-failing`, { method: 'POST', body: form({}, { name: 'f.bin', content: randomBytes(300 * 1024) }) });
    expect(response.status).toBe(502);
    await eventually(() => tempFiles(dir).length === 0);
    expect(smtp.messages.length).toBe(before);
  });

  it('keeps the file of a background run until the run has finished', async () => {
    const content = randomBytes(300 * 1024);
    const before = smtp.messages.length;
    const response = await fetch(`${service.url}/mail-later?tag=bg`, { method: 'POST', body: form({}, { name: 'later.bin', content }) });
    expect(response.status).toBe(200);
    await peer.waitForRequests(peer.requestsTo('/gate').length + 1, '/gate');
    // Answered, but the run still goes on: the file stays.
    expect(tempFiles(dir)).toHaveLength(1);
    gate.open();
    await smtp.waitForMessages(before + 1);
    expect(
      smtp.messages
        .slice(before)
        .find((m) => m.parsed.subject === 'later bg')!
        .parsed.attachments[0]!.content.equals(content),
    ).toBe(true);
    await eventually(() => tempFiles(dir).length === 0);
  });

  it('removes the partial file of a client that goes away in the middle of its upload', async () => {
    const gateCalls = peer.requestsTo('/gate').length;
    const { port, hostname } = new URL(service.url);
    const boundary = 'cut-off-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const socket = connect(Number(port), hostname);
    socket.on('error', () => {});
    socket.write(
      `POST /mail HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${head.length + 2 * 1024 * 1024}\r\n\r\n${head}`,
    );
    socket.write(randomBytes(512 * 1024));
    await eventually(() => tempFiles(dir).some((f) => f.size > 64 * 1024));
    socket.destroy();
    await eventually(() => tempFiles(dir).length === 0);
    await eventually(async () => (await metric(service, 'endpoint_service_request_body_bytes_in_flight')) === 0);
    // Never a complete request: no task ran.
    expect(peer.requestsTo('/gate').length).toBe(gateCalls);
  });
});

describe('the end of a process', () => {
  it('removes its folder on SIGTERM, even while a task still holds an upload', async () => {
    const dir = uploadDir();
    const service = await startServe(APP, ['--smtp-url', smtp.url, '--upload-dir', dir, '--shutdown-timeout', '1s'], { PEER: peer.origin });
    const answer = fetch(`${service.url}/mail`, { method: 'POST', body: form({}, { name: 'f.bin', content: randomBytes(300 * 1024) }) }).catch(() => null);
    await peer.waitForRequests(peer.requestsTo('/gate').length + 1, '/gate');
    expect(tempFiles(dir)).toHaveLength(1);
    const exit = await service.stop('SIGTERM');
    expect(exit.code).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
    gate.open();
    await answer;
  });

  it('leaves its folder when killed with SIGKILL, and the next start removes it', async () => {
    const dir = uploadDir();
    const first = await startServe(APP, ['--smtp-url', smtp.url, '--upload-dir', dir], { PEER: peer.origin });
    const answer = fetch(`${first.url}/mail`, { method: 'POST', body: form({}, { name: 'f.bin', content: randomBytes(300 * 1024) }) }).catch(() => null);
    await peer.waitForRequests(peer.requestsTo('/gate').length + 1, '/gate');
    const [left] = folders(dir);
    await first.stop('SIGKILL');
    await answer;
    // Nothing could clean up: the folder and its file are still there.
    expect(folders(dir)).toEqual([left]);
    expect(tempFiles(dir)).toHaveLength(1);

    const second = await startServe(APP, ['--smtp-url', smtp.url, '--upload-dir', dir], { PEER: peer.origin });
    try {
      expect(existsSync(path.join(dir, left!))).toBe(false);
      expect(folders(dir)).toHaveLength(1);
      expect(tempFiles(dir)).toEqual([]);
      expect(await second.waitForLog((l) => l.msg === 'removed temporary uploads left by processes that ended')).toMatchObject({ folders: 1 });
    } finally {
      gate.open();
      await second.stop();
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it('leaves the folder of a process that still runs alone', async () => {
    const dir = uploadDir();
    const first = await startServe(APP, ['--smtp-url', smtp.url, '--upload-dir', dir], { PEER: peer.origin });
    const second = await startServe(APP, ['--smtp-url', smtp.url, '--upload-dir', dir], { PEER: peer.origin });
    try {
      expect(folders(dir)).toHaveLength(2);
      expect(second.logs().some((l) => l.msg === 'removed temporary uploads left by processes that ended')).toBe(false);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('a file that cannot be written', () => {
  it('answers 503 with Retry-After, runs no task, and the next upload is stored again', async () => {
    const dir = uploadDir();
    const service = await startServe(APP, ['--smtp-url', smtp.url, '--upload-dir', dir], { PEER: peer.origin });
    try {
      // The process names its files 0, 1, ...: a folder in the way of the first makes its creation fail.
      const blocker = path.join(dir, folders(dir)[0]!, '0');
      mkdirSync(blocker);
      const gateCalls = peer.requestsTo('/gate').length;
      const refused = await fetch(`${service.url}/mail`, { method: 'POST', body: form({}, { name: 'f.bin', content: randomBytes(300 * 1024) }) });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('2');
      expect(((await refused.json()) as { detail: string }).detail).toContain('could not be stored');
      expect(peer.requestsTo('/gate').length).toBe(gateCalls);
      rmSync(blocker, { recursive: true });
      await eventually(async () => (await metric(service, 'endpoint_service_upload_temporary_files')) === 0);

      const content = randomBytes(300 * 1024);
      const before = smtp.messages.length;
      gate.open();
      const stored = await fetch(`${service.url}/mail?tag=again`, { method: 'POST', body: form({}, { name: 'f.bin', content }) });
      expect(stored.status).toBe(200);
      expect(
        smtp.messages
          .slice(before)
          .find((m) => m.parsed.subject === 'upload again')!
          .parsed.attachments[0]!.content.equals(content),
      ).toBe(true);
    } finally {
      await service.stop();
    }
  });
});

describe('--max-inflight-body-size', () => {
  let service: RunningService;

  beforeAll(async () => {
    service = await startServe(APP, ['--smtp-url', smtp.url, '--max-body-size', '64k', '--max-inflight-body-size', '64k', '--upload-dir', uploadDir()], {
      PEER: peer.origin,
    });
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('answers a body that does not fit with 503 and Retry-After, without parsing it, and counts it', async () => {
    // A JSON body of 60,000 bytes whose client stalls before its last 1,000: it holds what arrived.
    const { port, hostname } = new URL(service.url);
    const value = 'x'.repeat(60_000 - '{"name":""}'.length);
    const whole = `{"name":"${value}"}`;
    const slow = connect(Number(port), hostname);
    slow.on('error', () => {});
    let slowAnswer = '';
    slow.setEncoding('utf8').on('data', (text: string) => (slowAnswer += text));
    slow.write(
      `POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${whole.length}\r\n\r\n${whole.slice(0, 59_000)}`,
    );
    await eventually(async () => (await metric(service, 'endpoint_service_request_body_bytes_in_flight')) === 59_000);

    // 10,000 more would exceed 64 KiB. The body is not even JSON: parsed, it would be a 400.
    const refused = await fetch(`${service.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{'.repeat(10_000) });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('2');
    expect(((await refused.json()) as { detail: string }).detail).toContain('too many request bodies');
    expect(await metric(service, 'endpoint_service_request_body_refusals_total')).toBe(1);

    // The stalled client finishes: it is answered, and its room is given back.
    slow.write(whole.slice(59_000));
    await new Promise((resolve) => slow.once('close', resolve));
    expect(slowAnswer).toMatch(/^HTTP\/1\.1 200 /);
    expect(slowAnswer.endsWith(value)).toBe(true);
    await eventually(async () => (await metric(service, 'endpoint_service_request_body_bytes_in_flight')) === 0);

    // Now the same body fits, and is read: this one is not JSON, so a 400.
    const read = await fetch(`${service.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{'.repeat(10_000) });
    expect(read.status).toBe(400);
    expect(await metric(service, 'endpoint_service_request_body_refusals_total')).toBe(1);
  });
});

describe('--max-inflight-body-size, a body already being read', () => {
  it('waits for room in the middle of its body, its end arriving meanwhile, and then is read whole', async () => {
    const service = await startServe(
      APP,
      ['--smtp-url', smtp.url, '--max-body-size', '256k', '--max-inflight-body-size', '256k', '--upload-dir', uploadDir()],
      { PEER: peer.origin },
    );
    const LIMIT = 256 * 1024;
    const inFlight = () => metric(service, 'endpoint_service_request_body_bytes_in_flight');
    const waiting = () => metric(service, 'endpoint_service_request_body_waiting');
    const sockets: Socket[] = [];
    try {
      const { port, hostname } = new URL(service.url);
      const send = (head: string) => {
        const socket = connect(Number(port), hostname);
        sockets.push(socket);
        socket.on('error', () => {});
        let answer = '';
        socket.setEncoding('utf8').on('data', (text: string) => (answer += text));
        socket.write(head);
        return { socket, answer: new Promise<string>((resolve) => socket.once('close', () => resolve(answer))) };
      };

      // A: a multipart form with one 200 KB field, held in memory; all but its last 100 bytes arrive.
      const boundary = 'midway-boundary';
      const name = 'n'.repeat(200_000);
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\n${name}\r\n--${boundary}--\r\n`;
      const first = body.length - 100;
      const a = send(
        `POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, first)}`,
      );
      await eventually(async () => (await inFlight()) === first);
      // B, a small upload kept in memory while its mail's gate is held, takes the rest of the room.
      const fileHead = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="b.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
      const fileTail = `\r\n--${boundary}--\r\n`;
      const bBody = fileHead + 'b'.repeat(LIMIT - first - fileHead.length - fileTail.length) + fileTail;
      const b = send(
        `POST /mail HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${bBody.length}\r\n\r\n${bBody}`,
      );
      await eventually(async () => (await inFlight()) === LIMIT);
      // A's last 100 bytes, its end with them, find no room: A waits.
      a.socket.write(body.slice(first));
      await eventually(async () => (await waiting()) === 1);
      // B's mail goes out and its room comes back: A's last bytes get it, and A is read to its end.
      gate.open();
      expect(await b.answer).toMatch(/^HTTP\/1\.1 200 /);
      const answer = await a.answer;
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(answer.endsWith(name)).toBe(true);
      expect(await metric(service, 'endpoint_service_request_body_refusals_total')).toBe(0);
    } finally {
      gate.open();
      // A request left waiting for its body would hold the shutdown for its whole timeout.
      for (const socket of sockets) socket.destroy();
      await service.stop();
    }
  });
});

describe('command line', () => {
  it('shows the default of --max-inflight-body-size in the unit it takes, and starts with it given back', async () => {
    const help = (await run(['serve', '--help'])).stdout.replace(/\s+/g, ' ');
    const shown = /--max-inflight-body-size <size> .*?\(default: ([^)]+)\)/.exec(help)?.[1];
    expect(shown).toBe('256 MiB');
    const service = await startServe(APP, ['--smtp-url', smtp.url, '--max-inflight-body-size', shown!], { PEER: peer.origin });
    try {
      expect(await metric(service, 'endpoint_service_request_body_bytes_limit')).toBe(256 * 1024 * 1024);
    } finally {
      await service.stop();
    }
  });

  it('takes --max-body-size as the default budget when that is larger', async () => {
    const service = await startServe(APP, ['--smtp-url', smtp.url, '--max-body-size', '300MiB'], { PEER: peer.origin });
    try {
      expect(await metric(service, 'endpoint_service_request_body_bytes_limit')).toBe(300 * 1024 * 1024);
    } finally {
      await service.stop();
    }
  });

  it('refuses --max-inflight-body-size below --max-body-size', async () => {
    const result = await runServeToExit(APP, ['--max-inflight-body-size', '1MiB', '--max-body-size', '2MiB']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--max-inflight-body-size');
  });

  it('refuses an --upload-dir that does not exist or is a file', async () => {
    const missing = await runServeToExit(APP, ['--upload-dir', path.join(tmpdir(), 'no-such-folder-for-uploads')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('does not exist');
    const file = await runServeToExit(APP, ['--upload-dir', APP]);
    expect(file.code).toBe(2);
    expect(file.stderr).toContain('not a folder');
  });
});
