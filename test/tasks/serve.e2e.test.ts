// Tasks through the real binary: `serve` on fixtures/tasks/signup with a real HTTP peer and
// SMTP peer on loopback. Needs the build in dist/ (npm test runs tsc first).
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const file = fileURLToPath(new URL('../../fixtures/tasks/signup/endpoints.xml', import.meta.url));

let http: HttpPeer;
let smtp: SmtpPeer;
let server: ReturnType<typeof startServer>;
let base: string;
const logLines: Record<string, unknown>[] = [];
const logWaiters: { match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];

function startServer() {
  return execa('node', ['bin/endpoint-service.js', 'serve', file, '--port', '0', '--workers', '1', '--smtp-url', smtp.url, '--log-format', 'json'], {
    cwd: root,
    env: { HTTP_PEER: http.origin, API_KEY: 'key-e2e' },
    reject: false,
    buffer: false,
  });
}

beforeAll(async () => {
  http = await HttpPeer.start();
  smtp = await SmtpPeer.start();
  server = startServer();
  server.stderr!.setEncoding('utf8');
  let partial = '';
  server.stderr!.on('data', (chunk: string) => {
    partial += chunk;
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const text of lines) {
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        continue;
      }
      logLines.push(line);
      for (let i = logWaiters.length - 1; i >= 0; i--) if (logWaiters[i]!.match(line)) logWaiters.splice(i, 1)[0]!.resolve(line);
    }
  });
  base = await new Promise<string>((resolve, reject) => {
    let out = '';
    server.stdout!.setEncoding('utf8');
    server.stdout!.on('data', (chunk: string) => {
      out += chunk;
      const m = /endpoint-service listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void server.then((r) => reject(new Error(`serve exited early (${r.exitCode}): ${logLines.map((l) => JSON.stringify(l)).join('\n')}`)));
  });
});

afterAll(async () => {
  server?.kill('SIGTERM');
  await server;
  await http?.close();
  await smtp?.close();
});

/** The log line of a task outcome; every task reports exactly one. */
function taskLog(requestId: string, task: string): Promise<Record<string, unknown>> {
  const match = (l: Record<string, unknown>) => l['msg'] === 'task' && l['requestId'] === requestId && l['task'] === task;
  const found = logLines.find(match);
  if (found) return Promise.resolve(found);
  return new Promise((resolve) => logWaiters.push({ match, resolve }));
}

function post(endpoint: string, form: Record<string, string>): Promise<Response> {
  return fetch(`${base}/${endpoint}`, { method: 'POST', body: new URLSearchParams(form) });
}

describe('serve runs the tasks', () => {
  it('calls the HTTP peer, then mails, before answering', async () => {
    http.route('/customers', { status: 201, json: { id: 'c-7' } });
    http.route('/crm', { headers: { 'content-type': 'application/xml' }, body: '<crm><segment name="new"/></crm>' });
    http.route('/customers/c-7/tags', { status: 200 });
    http.route('/audit', { status: 200 });
    const before = smtp.messages.length;
    const response = await post('signup', { email: 'ada@example.com', name: 'Ada' });
    expect(response.status).toBe(200);
    // tasks="wait": the answer comes after the mail was accepted.
    const mails = smtp.messages.slice(before);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.envelope.to).toEqual(['ada@example.com']);
    expect(mails[0]!.parsed.text?.trim()).toBe('Your customer number is c-7.');
    expect(http.requestsTo('/customers').at(-1)!.headers['x-api-key']).toBe('key-e2e');
    const requestId = response.headers.get('x-request-id')!;
    expect(await taskLog(requestId, 'welcome')).toMatchObject({ outcome: 'succeeded', kind: 'email', attempts: 1 });
  });

  it('answers 502 when a task fails, and sends no email', async () => {
    http.route('/customers', { status: 500, body: 'database down' });
    http.route('/crm', { headers: { 'content-type': 'application/xml' }, body: '<crm><segment name="new"/></crm>' });
    const before = smtp.messages.length;
    const response = await post('signup', { email: 'bob@example.com' });
    expect(response.status).toBe(502);
    const problem = (await response.json()) as { detail: string };
    expect(problem.detail).toContain('create-customer');
    expect(problem.detail).not.toContain('127.0.0.1');
    const requestId = response.headers.get('x-request-id')!;
    expect(await taskLog(requestId, 'welcome')).toMatchObject({ outcome: 'not-started' });
    expect(await taskLog(requestId, 'create-customer')).toMatchObject({ outcome: 'failed', error: expect.stringContaining('answered 500') });
    expect(smtp.messages.length).toBe(before);
    for (const line of logLines) expect(JSON.stringify(line)).not.toContain('key-e2e');
  });

  it('answers a background endpoint at once and runs its tasks afterwards', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    http.route('/ping', { status: 200, hold: () => held });
    const before = smtp.messages.length;
    const response = await post('notify', { email: 'carol@example.com' });
    // The answer is here while the task's request is still held by the peer.
    expect(response.status).toBe(200);
    expect(http.requestsTo('/ping').at(-1)?.endedAt ?? null).toBeNull();
    expect(smtp.messages.length).toBe(before);
    release();
    await smtp.waitForMessages(before + 1);
    expect(smtp.messages.at(-1)!.parsed.subject).toBe('Background note');
    const requestId = response.headers.get('x-request-id')!;
    expect(await taskLog(requestId, 'note')).toMatchObject({ outcome: 'succeeded' });
  });

  it('forwards a multipart upload as an attachment', async () => {
    const before = smtp.messages.length;
    const form = new FormData();
    form.set('email', 'dan@example.com');
    form.set('cv', new Blob([Buffer.from('%PDF-1.4 e2e')], { type: 'application/pdf' }), 'cv.pdf');
    const response = await fetch(`${base}/apply`, { method: 'POST', body: form });
    expect(response.status).toBe(200);
    const mail = smtp.messages.slice(before)[0]!;
    expect(mail.envelope.to).toEqual(['dan@example.com']);
    const cv = mail.parsed.attachments.find((a) => a.filename === 'cv.pdf')!;
    expect(cv.content.toString()).toBe('%PDF-1.4 e2e');
    expect(cv.contentType).toBe('application/pdf');
    expect(mail.parsed.attachments.map((a) => a.filename).sort()).toEqual(['cv.pdf', 'logo.png', 'terms.txt']);
  });
});
