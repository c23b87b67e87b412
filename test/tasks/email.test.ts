import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmailSettings } from '../../src/compiler/ast.js';
import { EmailDelivery, toMailOptions } from '../../src/tasks/email/delivery.js';
import type { PreparedEmail } from '../../src/tasks/email/types.js';
import { TaskError } from '../../src/tasks/errors.js';
import { resolveSmtpConnection } from '../../src/tasks/email/smtp-settings.js';
import { closedPort, SmtpPeer } from '../helpers/smtp-peer.js';
import { at, tpl } from './builders.js';

const staticDir = fileURLToPath(new URL('../../fixtures/tasks/signup/static/', import.meta.url));

let peer: SmtpPeer;
let refusing: SmtpPeer;
beforeAll(async () => {
  peer = await SmtpPeer.start();
  refusing = await SmtpPeer.start({ refuseRecipients: ['nobody@example.com'] });
});
afterAll(async () => {
  await peer.close();
  await refusing.close();
});

const always = { timeoutMs: 10_000, retries: 0, mayContinue: () => true };

function message(overrides: Partial<PreparedEmail> = {}): PreparedEmail {
  return {
    from: 'Shop <shop@example.com>',
    to: 'ada@example.com',
    cc: [],
    bcc: [],
    replyTo: null,
    subject: 'Your order',
    headers: {},
    bodies: [{ contentType: 'text/plain', content: 'Thank you.' }],
    attachments: [],
    ...overrides,
  };
}

async function deliveryError(promise: Promise<unknown>): Promise<TaskError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TaskError);
    return error as TaskError;
  }
  throw new Error('expected delivery to fail');
}

describe('EmailDelivery', () => {
  it('delivers every prepared field: addresses, headers, alternative bodies, attachments, inline images', async () => {
    const delivery = new EmailDelivery({ settings: null, smtpUrl: peer.url, env: {} });
    const before = peer.messages.length;
    const report = await delivery.deliver(
      [
        message({
          cc: ['boss@example.com'],
          bcc: ['audit@example.com'],
          replyTo: 'help@example.com',
          subject: 'Grüße – order 17',
          headers: { 'X-Campaign': 'spring' },
          bodies: [
            { contentType: 'text/plain', content: 'Plain text' },
            { contentType: 'text/html', content: '<p>HTML <img src="cid:logo.png"></p>' },
          ],
          attachments: [
            { filename: 'terms.txt', contentType: 'text/plain', source: { kind: 'file', path: staticDir + 'terms.txt' }, cid: null },
            { filename: 'upload.bin', contentType: 'application/octet-stream', source: { kind: 'buffer', content: Buffer.from([1, 2, 3]) }, cid: null },
            { filename: 'logo.png', contentType: 'image/png', source: { kind: 'file', path: staticDir + 'logo.png' }, cid: 'logo.png' },
          ],
        }),
      ],
      always,
    );
    await delivery.close();
    expect(report).toEqual({ sent: 1, attempts: 1, stopped: false });
    expect(peer.messages.length).toBe(before + 1);
    const mail = peer.messages.at(-1)!;
    expect(mail.envelope.from).toBe('shop@example.com');
    expect([...mail.envelope.to].sort()).toEqual(['ada@example.com', 'audit@example.com', 'boss@example.com']);
    expect(mail.raw).not.toContain('audit@example.com');
    expect(mail.parsed.subject).toBe('Grüße – order 17');
    expect(mail.parsed.headers.get('x-campaign')).toBe('spring');
    expect(mail.parsed.text?.trim()).toBe('Plain text');
    expect(mail.parsed.html).toContain('<p>HTML');
    expect(mail.raw).toMatch(/multipart\/alternative/);
    const byName = new Map(mail.parsed.attachments.map((a) => [a.filename, a]));
    expect(byName.get('terms.txt')!.content.toString()).toBe(readFileSync(staticDir + 'terms.txt', 'utf8'));
    expect([...byName.get('upload.bin')!.content]).toEqual([1, 2, 3]);
    expect(byName.get('logo.png')!.contentId).toBe('<logo.png>');
    expect(byName.get('logo.png')!.related).toBe(true);
  });

  it('fails on the first refused recipient and sends none of the messages after it', async () => {
    const delivery = new EmailDelivery({ settings: null, smtpUrl: refusing.url, env: {} });
    const error = await deliveryError(
      delivery.deliver([message({ to: 'nobody@example.com' }), message({ to: 'ada@example.com' })], always),
    );
    await delivery.close();
    expect(error.message).toContain('message 1 of 2 (to nobody@example.com)');
    expect(error.message).toMatch(/550|rejected/);
    expect(refusing.messages).toHaveLength(0);
    expect(refusing.recipientsTried).not.toContain('ada@example.com');
  });

  it('reports a server that refuses connections, after the configured retries', async () => {
    const port = await closedPort();
    const delivery = new EmailDelivery({ settings: null, smtpUrl: `smtp://127.0.0.1:${port}`, env: {} });
    const error = await deliveryError(delivery.deliver([message()], { ...always, retries: 1 }));
    await delivery.close();
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.attempts).toBe(2);
  });

  it('retries a temporary 4xx refusal and reports the attempts', async () => {
    const greylisting = await SmtpPeer.start({ deferFirstRecipients: 1 });
    const delivery = new EmailDelivery({ settings: null, smtpUrl: greylisting.url, env: {} });
    try {
      const report = await delivery.deliver([message()], { ...always, retries: 2 });
      expect(report).toEqual({ sent: 1, attempts: 2, stopped: false });
      expect(greylisting.messages).toHaveLength(1);
    } finally {
      await delivery.close();
      await greylisting.close();
    }
  });

  it('fails a message the server does not take within the timeout', async () => {
    // Accepts the connection and never greets.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const delivery = new EmailDelivery({ settings: null, smtpUrl: `smtp://127.0.0.1:${port}`, env: {} });
    try {
      const error = await deliveryError(delivery.deliver([message()], { ...always, timeoutMs: 300 }));
      expect(error.message).toContain('did not accept the message within 300 ms');
    } finally {
      await delivery.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('stops before the next message when told the request failed', async () => {
    const delivery = new EmailDelivery({ settings: null, smtpUrl: peer.url, env: {} });
    const before = peer.messages.length;
    let calls = 0;
    const report = await delivery.deliver([message({ to: 'a@example.com' }), message({ to: 'b@example.com' })], {
      ...always,
      mayContinue: () => ++calls === 1,
    });
    await delivery.close();
    expect(report).toEqual({ sent: 1, attempts: 1, stopped: true });
    expect(peer.messages.length).toBe(before + 1);
  });

  it('refuses to send credentials without STARTTLS', async () => {
    const settings: EmailSettings = {
      server: tpl('127.0.0.1'),
      port: peer.port,
      username: tpl('mailer'),
      password: tpl('${env:SMTP_PASSWORD}'),
      headers: [],
      position: at,
    };
    const delivery = new EmailDelivery({ settings, env: { SMTP_PASSWORD: 'pw-value-123' } });
    const before = peer.messages.length;
    const error = await deliveryError(delivery.deliver([message()], always));
    await delivery.close();
    expect(error.message).toMatch(/STARTTLS/i);
    expect(error.message).not.toContain('pw-value-123');
    expect(peer.messages.length).toBe(before);
  });

  it('fails every message when no SMTP server is configured', async () => {
    const delivery = new EmailDelivery({ settings: null, env: {} });
    const error = await deliveryError(delivery.deliver([message()], always));
    expect(error.message).toContain('no SMTP server is configured');
  });
});

describe('toMailOptions', () => {
  it('refuses CR or LF in the subject, addresses and headers', () => {
    expect(() => toMailOptions(message({ subject: 'Hi\r\nBcc: victim@example.com' }))).toThrow(/line break/);
    expect(() => toMailOptions(message({ to: 'ada@example.com\nBcc: x@example.com' }))).toThrow(/line break/);
    expect(() => toMailOptions(message({ headers: { 'X-A': 'a\rb' } }))).toThrow(/line break/);
  });

  it('refuses an address field that holds more than one address', () => {
    expect(() => toMailOptions(message({ to: 'ada@example.com, eve@example.com' }))).toThrow(/not exactly one email address/);
    expect(() => toMailOptions(message({ cc: ['a@example.com; b@example.com'] }))).toThrow(/not exactly one email address/);
    expect(() => toMailOptions(message({ from: 'nobody' }))).toThrow(/not exactly one email address/);
  });
});

describe('resolveSmtpConnection', () => {
  const settings = (over: Partial<EmailSettings>): EmailSettings => ({
    server: tpl('${env:SMTP_HOST}'),
    port: null,
    username: null,
    password: null,
    headers: [],
    position: at,
    ...over,
  });

  it('uses port 587 and requires STARTTLS with credentials, port 25 without', () => {
    const env = { SMTP_HOST: 'mail.example', SMTP_PASSWORD: 's3cret' };
    const withAuth = resolveSmtpConnection(settings({ username: tpl('u'), password: tpl('${env:SMTP_PASSWORD}') }), undefined, env);
    expect(withAuth).toMatchObject({ ok: true, connection: { host: 'mail.example', port: 587, requireTLS: true, secure: false, auth: { user: 'u', pass: 's3cret' } } });
    if (withAuth.ok) expect(withAuth.connection.description).not.toContain('s3cret');
    const plain = resolveSmtpConnection(settings({}), undefined, env);
    expect(plain).toMatchObject({ ok: true, connection: { port: 25, requireTLS: false, auth: null } });
  });

  it('lets the URL replace the file and keeps its password out of the description', () => {
    const r = resolveSmtpConnection(settings({}), 'smtp://user:hunter2@relay.example:2525', {});
    expect(r).toMatchObject({ ok: true, connection: { host: 'relay.example', port: 2525, auth: { user: 'user', pass: 'hunter2' }, description: 'smtp://relay.example:2525' } });
  });

  it('names a missing environment variable and a bad URL', () => {
    expect(resolveSmtpConnection(settings({}), undefined, {})).toMatchObject({ ok: false, error: expect.stringContaining('SMTP_HOST') });
    expect(resolveSmtpConnection(null, 'http://x', {})).toMatchObject({ ok: false, error: expect.stringContaining('smtp://') });
  });

  it('refuses a URL without a host, to which nodemailer would quietly pick localhost', () => {
    for (const url of ['smtp://', 'smtp:relay.example', 'smtps:///path']) {
      expect(resolveSmtpConnection(null, url, {}), url).toMatchObject({ ok: false, error: expect.stringContaining('names no host') });
    }
  });
});
