// The task engine on an application compiled from fixtures/tasks/signup, with real peers.
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { compileApplication, type Application } from '../../src/compiler/index.js';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TaskEngine } from '../../src/runtime/task-runner.js';
import { TASK_KINDS } from '../../src/tasks/registry.js';
import { DEFAULT_TASK_SETTINGS } from '../../src/tasks/settings.js';
import { RequestUploads, type Upload } from '../../src/upload.js';
import { HttpPeer } from '../helpers/http-peer.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';
import { RecordingObserver, scope } from './builders.js';

const file = fileURLToPath(new URL('../../fixtures/tasks/signup/endpoints.xml', import.meta.url));

let http: HttpPeer;
let smtp: SmtpPeer;
let app: Application;
let env: Record<string, string>;
const open: TaskEngine[] = [];

beforeAll(async () => {
  http = await HttpPeer.start();
  smtp = await SmtpPeer.start();
  env = { HTTP_PEER: http.origin, API_KEY: 'key-123' };
  const compiled = compileApplication(file, { kinds: TASK_KINDS.list, mode: 'serve', env, smtpUrlGiven: true });
  expect(compiled.diagnostics).toEqual([]);
  app = compiled.application!;
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await http.close();
  await smtp.close();
});

function run(endpointName: string, parameters: Record<string, string>, uploads: RequestUploads = RequestUploads.NONE) {
  const observer = new RecordingObserver();
  const services = new TaskEngine(
    TASK_KINDS,
    { application: app, env, settings: { ...DEFAULT_TASK_SETTINGS, email: { smtpUrl: smtp.url } }, warn: () => {} },
    observer,
  );
  open.push(services);
  const endpoint = app.endpointsByName.get(endpointName)!;
  const base = scope(parameters);
  return { observer, ...services.start({ endpoint, scope: { ...base, env }, uploads, requestId: 'req-c' }) };
}

describe('signup, compiled', () => {
  it('runs the whole chain and mails the value from the first answer', async () => {
    http.route('/customers', { status: 201, json: { id: 'c-981' } });
    http.route('/crm', { headers: { 'content-type': 'text/xml' }, body: '<crm><segment name="gold &amp; more"/></crm>' });
    http.route('/customers/c-981/tags', { status: 204 });
    http.route('/audit', { status: 503 }, { status: 200 });
    const mailsBefore = smtp.messages.length;

    const { result, settled, observer } = run('signup', { email: 'ada@example.com', name: 'Ada' });
    const outcome = await result;
    await settled;

    expect(outcome).toEqual({
      ok: true,
      intermediate: new Map([
        ['customer-id', 'c-981'],
        ['segment', 'gold & more'],
      ]),
    });
    const create = http.requestsTo('/customers').at(-1)!;
    expect(create.method).toBe('POST');
    expect(create.headers['x-api-key']).toBe('key-123');
    expect(create.headers['content-type']).toBe('application/json');
    expect(JSON.parse(create.body)).toEqual({ email: 'ada@example.com', name: 'Ada' });
    expect(http.requestsTo('/crm').at(-1)!.query.get('email')).toBe('ada@example.com');
    const tag = http.requestsTo('/customers/c-981/tags').at(-1)!;
    expect(new URLSearchParams(tag.body).get('segment')).toBe('gold & more');
    expect(tag.startedAt).toBeGreaterThan(create.endedAt!);
    expect(http.requestsTo('/audit').at(-1)!.startedAt).toBeGreaterThan(tag.endedAt!);
    expect(observer.outcome('audit')).toMatchObject({ outcome: 'succeeded', attempts: 2 });

    const mails = smtp.messages.slice(mailsBefore);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.parsed.subject).toBe('Welcome Ada');
    expect(mails[0]!.parsed.text?.trim()).toBe('Your customer number is c-981.');
    expect(mails[0]!.parsed.headers.get('x-sent-by')).toBe('endpoint-service tests');
    expect(mails[0]!.receivedAt).toBeGreaterThan(http.requestsTo('/audit').at(-1)!.endedAt!);
  });

  it('fails on a value of the wrong shape and sends no welcome mail', async () => {
    http.route('/customers', { status: 201, json: { id: 'x-1' } });
    http.route('/crm', { headers: { 'content-type': 'text/xml' }, body: '<crm><segment name="s"/></crm>' });
    const mailsBefore = smtp.messages.length;
    const { result, settled, observer } = run('signup', { email: 'ada@example.com', name: 'Ada' });
    const outcome = await result;
    await settled;
    expect(outcome).toMatchObject({
      ok: false,
      failedTask: 'create-customer',
      error: expect.objectContaining({ message: expect.stringContaining('does not match') }),
    });
    expect(observer.outcome('tag').outcome).toBe('not-started');
    expect(observer.outcome('welcome').outcome).toBe('not-started');
    expect(smtp.messages.length).toBe(mailsBefore);
    // The API key is a secret: it must not reach any outcome.
    for (const e of observer.events) expect(e.error ?? '').not.toContain('key-123');
  });

  it('attaches static files, inline images and the uploads of the request', async () => {
    const mailsBefore = smtp.messages.length;
    const content = Buffer.from('%PDF-1.4 test');
    const upload: Upload = { fieldName: 'cv', filename: 'cv.pdf', contentType: 'application/pdf', size: content.length, source: { kind: 'buffer', content } };
    const { result } = run('apply', { email: 'ada@example.com' }, new RequestUploads([upload], () => {}));
    expect((await result).ok).toBe(true);
    const mail = smtp.messages.slice(mailsBefore)[0]!;
    const byName = new Map(mail.parsed.attachments.map((a) => [a.filename, a]));
    expect(byName.get('cv.pdf')!.content.toString()).toBe('%PDF-1.4 test');
    expect(byName.get('cv.pdf')!.contentType).toBe('application/pdf');
    expect(byName.get('terms.txt')!.content.toString()).toContain('Terms and conditions');
    expect(byName.get('logo.png')!.contentId).toBe('<logo.png>');
    // mailparser swaps a cid: reference for the related part's data, so this proves the link.
    expect(mail.parsed.html).toContain('<img src="data:image/png;base64,');
  });

  it('streams an upload kept in a temporary file into the mail, and holds it until the run has settled', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'compiled-app-'));
    try {
      const file = path.join(folder, 'upload-0');
      const content = randomBytes(3 * 1024 * 1024 + 17);
      writeFileSync(file, content);
      const released: string[] = [];
      const uploads = new RequestUploads(
        [{ fieldName: 'cv', filename: 'big.bin', contentType: 'application/octet-stream', size: content.length, source: { kind: 'file', path: file } }],
        () => {
          released.push(file);
          rmSync(file);
        },
      );
      // The request's own hold, as the HTTP layer takes it, given up at once: the run keeps the file.
      const mailsBefore = smtp.messages.length;
      const requestHold = uploads.hold();
      const { result, settled } = run('apply', { email: 'ada@example.com' }, uploads);
      requestHold();
      expect(released).toEqual([]);
      expect((await result).ok).toBe(true);
      await settled;
      expect(released).toEqual([file]);
      expect(existsSync(file)).toBe(false);
      const attachment = smtp.messages.slice(mailsBefore)[0]!.parsed.attachments.find((a) => a.filename === 'big.bin')!;
      expect(attachment.content.equals(content)).toBe(true);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
