// SMTP credentials never cross the wire in clear, whether they come from
// email-sending-configuration.xml or from --smtp-url: one rule for both. The peer is a real
// smtp-server that offers AUTH on a plain connection and no STARTTLS, and counts every AUTH that
// reaches it, so "the password was not sent" is measured.
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmailSettings } from '../../src/compiler/ast.js';
import { EmailDelivery } from '../../src/tasks/email/delivery.js';
import { resolveSmtpConnection } from '../../src/tasks/email/smtp-settings.js';
import { TaskError } from '../../src/tasks/errors.js';
import type { PreparedEmail } from '../../src/tasks/email/types.js';
import { HttpPeer } from '../helpers/http-peer.js';
import { StartedServices } from '../helpers/serve.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';
import { RELIABILITY_FIXTURES } from '../reliability/raw.js';
import { at, tpl } from './builders.js';

const PASSWORD = 'pw-in-clear-4711';
let clear: SmtpPeer;
beforeAll(async () => {
  clear = await SmtpPeer.start({ offerAuthWithoutTls: true });
});
afterAll(async () => {
  await clear?.close();
});

const always = { timeoutMs: 10_000, retries: 0, mayContinue: () => true };
const message: PreparedEmail = {
  from: 'shop@example.com',
  to: 'ada@example.com',
  cc: [],
  bcc: [],
  replyTo: null,
  subject: 'Your order',
  headers: {},
  bodies: [{ contentType: 'text/plain', content: 'Thank you.' }],
  attachments: [],
};

async function failure(delivery: EmailDelivery): Promise<TaskError> {
  try {
    await delivery.deliver([message], always);
  } catch (error) {
    expect(error).toBeInstanceOf(TaskError);
    return error as TaskError;
  } finally {
    await delivery.close();
  }
  throw new Error('expected the delivery to fail');
}

describe('credentials and TLS', () => {
  it('the peer takes a password in clear from a client that sends one (what is measured below)', async () => {
    const before = clear.authAttempts;
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: clear.port, secure: false, auth: { user: 'mailer', pass: PASSWORD } });
    try {
      await transport.sendMail({ from: 'shop@example.com', to: 'ada@example.com', subject: 'x', text: 'x' });
    } finally {
      transport.close();
    }
    expect(clear.authAttempts).toBe(before + 1);
  });

  it('email-sending-configuration.xml: credentials without STARTTLS are not sent; the task fails and says why', async () => {
    const settings: EmailSettings = {
      server: tpl('127.0.0.1'),
      port: clear.port,
      username: tpl('mailer'),
      password: tpl('${env:SMTP_PASSWORD}'),
      headers: [],
      position: at,
    };
    const before = { auth: clear.authAttempts, messages: clear.messages.length };
    const error = await failure(new EmailDelivery({ settings, env: { SMTP_PASSWORD: PASSWORD } }));
    expect(error.message).toMatch(/STARTTLS/);
    expect(error.message).not.toContain(PASSWORD);
    expect(clear.authAttempts).toBe(before.auth);
    expect(clear.messages.length).toBe(before.messages);
  });

  it('--smtp-url with credentials: the same rule, the password is never sent in clear', async () => {
    const before = { auth: clear.authAttempts, messages: clear.messages.length };
    const error = await failure(new EmailDelivery({ settings: null, smtpUrl: `smtp://mailer:${PASSWORD}@127.0.0.1:${clear.port}`, env: {} }));
    expect(error.message).toMatch(/STARTTLS/);
    expect(error.message).not.toContain(PASSWORD);
    expect(clear.authAttempts).toBe(before.auth);
    expect(clear.messages.length).toBe(before.messages);
  });

  it('--smtp-url without credentials is sent as before, on the plain connection', async () => {
    const before = clear.messages.length;
    const delivery = new EmailDelivery({ settings: null, smtpUrl: `smtp://127.0.0.1:${clear.port}`, env: {} });
    try {
      await delivery.deliver([message], always);
    } finally {
      await delivery.close();
    }
    expect(clear.messages.length).toBe(before + 1);
  });

  it('resolves both into the same connection: requireTLS with credentials unless TLS from the first byte', () => {
    const settings = (port: number): EmailSettings => ({
      server: tpl('mail.example'),
      port,
      username: tpl('u'),
      password: tpl('p w'),
      headers: [],
      position: at,
    });
    const fromFile = resolveSmtpConnection(settings(2525), undefined, {});
    const fromUrl = resolveSmtpConnection(null, 'smtp://u:p%20w@mail.example:2525', {});
    expect(fromUrl).toEqual(fromFile);
    expect(fromUrl).toMatchObject({ ok: true, connection: { requireTLS: true, secure: false, auth: { user: 'u', pass: 'p w' } } });
    expect(resolveSmtpConnection(null, 'smtps://u:p%20w@mail.example:465', {})).toEqual(resolveSmtpConnection(settings(465), undefined, {}));
    expect(resolveSmtpConnection(null, 'smtps://u:pw@mail.example:465', {})).toMatchObject({ ok: true, connection: { requireTLS: false, secure: true } });
  });

  it('refuses URL options that nodemailer would read from a query string (they could turn TLS off)', () => {
    for (const url of ['smtp://u:pw@mail.example:587?ignoreTLS=true', 'smtp://u:pw@mail.example:587/?requireTLS=false']) {
      const resolved = resolveSmtpConnection(null, url, {});
      expect(resolved).toMatchObject({ ok: false, error: expect.stringContaining('no options') });
      if (!resolved.ok) expect(resolved.error).not.toContain('pw');
    }
  });
});

describe('serve --smtp-url smtp://user:password@host against a server without STARTTLS', () => {
  const services = new StartedServices();
  let crm: HttpPeer;
  beforeAll(async () => {
    crm = await HttpPeer.start();
    crm.route('/record', { status: 200 });
  });
  afterAll(async () => {
    await services.stopAll();
    await crm?.close();
  });

  it('the mail task fails with a reported error naming STARTTLS, the peer sees no AUTH and no message, the log no password', async () => {
    const service = await services.start(`${RELIABILITY_FIXTURES}tasks/endpoints.xml`, ['--smtp-url', `smtp://mailer:${PASSWORD}@127.0.0.1:${clear.port}`], {
      PEER: crm.origin,
    });
    const before = { auth: clear.authAttempts, messages: clear.messages.length };
    const response = await fetch(`${service.url}/order?item=book`);
    expect(response.status).toBe(502);
    const requestId = response.headers.get('x-request-id');
    const line = await service.waitForLog((l) => l.msg === 'task' && l.requestId === requestId && l.outcome === 'failed');
    expect(line.task).toBe('confirm');
    expect(String(line.error)).toMatch(/STARTTLS/);
    expect(clear.authAttempts).toBe(before.auth);
    expect(clear.messages.length).toBe(before.messages);
    expect(service.stderr()).not.toContain(PASSWORD);
  });
});
