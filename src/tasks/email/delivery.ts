// Delivers PreparedEmails over one pooled SMTP transport per process, so a busy endpoint does
// not open a connection per message.

import type { Transporter } from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { EmailSettings } from '../../compiler/ast.js';
import { readOneAddress } from '../../email-address.js';
import { TaskError } from '../errors.js';
import type { EffectLedger } from '../kind.js';
import { withRetries } from '../retry.js';
import type { Span } from '../../tracing.js';
import { MAIL_BODY_LIMIT_TEXT, mailBodyTooLarge, mailHeaderTextProblem } from './checks.js';
import { resolveSmtpConnection, type SmtpConnection, type SmtpResolution } from './smtp-settings.js';
import type { PreparedEmail } from './types.js';

export interface EmailDeliveryOptions {
  readonly settings: EmailSettings | null;
  readonly smtpUrl?: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Errors of the pool outside any send (e.g. an idle connection dropped by the server). */
  readonly onPoolError?: (message: string) => void;
}

export interface DeliverOptions {
  /** Per message attempt. */
  readonly timeoutMs: number;
  readonly retries: number;
  /** Asked before each message: false stops delivery (another task of the request failed). */
  readonly mayContinue: () => boolean;
  /** A durable run: each message is marked before and after its SMTP transaction. */
  readonly effects?: EffectLedger | undefined;
  /** The task's span when tracing is on (each attempt of each message gets a child). */
  readonly span?: Span | undefined;
}

export interface DeliveryReport {
  readonly sent: number;
  /** Highest attempt count any one message needed. */
  readonly attempts: number;
  /** True when mayContinue() stopped delivery before every message was sent. */
  readonly stopped: boolean;
}

// Connection-level nodemailer codes: the server was not reached or dropped us.
const TRANSIENT_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNREFUSED', 'ECONNRESET']);

export class EmailDelivery {
  private readonly resolution: SmtpResolution;
  private transport: Promise<Transporter> | null = null;
  private closed = false;
  private readonly onPoolError: (message: string) => void;

  constructor(options: EmailDeliveryOptions) {
    this.resolution = resolveSmtpConnection(options.settings, options.smtpUrl, options.env);
    this.onPoolError = options.onPoolError ?? (() => {});
  }

  /** Host and port, for logs. */
  get description(): string {
    return this.resolution.ok ? this.resolution.connection.description : '(no SMTP server)';
  }

  /**
   * Sends the messages one after the other; the first refused message fails the task and
   * the rest are not sent.
   */
  async deliver(messages: readonly PreparedEmail[], options: DeliverOptions): Promise<DeliveryReport> {
    let maxAttempts = 0;
    for (let i = 0; i < messages.length; i++) {
      if (!options.mayContinue()) return { sent: i, attempts: maxAttempts, stopped: true };
      const message = messages[i]!;
      const label = messages.length > 1 ? `message ${i + 1} of ${messages.length} (to ${message.to})` : `message to ${message.to}`;
      if (options.effects !== undefined) {
        const gate = await options.effects.before(i, message.messageId ?? '');
        // Sent by an earlier attempt, or begun by one and of unknown outcome (the ledger reports it): not sent again.
        if (gate === 'done' || gate === 'unknown') continue;
        if (gate === 'lost') throw new TaskError(`${label}: not sent: another worker has taken this run over`, { code: 'shutting-down', transient: true });
      }
      const uncertain = { value: false };
      let attempts: number;
      try {
        attempts = await this.deliverOne(message, label, options, uncertain);
      } catch (error) {
        // A refusal is an answer: the server did not take the message. Only a timeout or a
        // connection lost during an attempt leaves open whether it did.
        if (!uncertain.value) await options.effects?.notDone(i);
        throw error;
      }
      await options.effects?.after(i);
      maxAttempts = Math.max(maxAttempts, attempts);
    }
    return { sent: messages.length, attempts: maxAttempts, stopped: false };
  }

  async close(): Promise<void> {
    this.closed = true;
    const transport = this.transport;
    this.transport = null;
    // A transport still being created (nodemailer loading) is closed once it exists.
    transport?.then(
      (t) => t.close(),
      () => {},
    );
  }

  /** `uncertain.value` is set when an attempt failed in a way that may have delivered the message. */
  private async deliverOne(message: PreparedEmail, label: string, options: DeliverOptions, uncertain: { value: boolean }): Promise<number> {
    let mail: Mail.Options;
    try {
      mail = toMailOptions(message);
    } catch (error) {
      throw new TaskError(`${label}: ${(error as Error).message}`, { code: 'invalid-value', cause: error });
    }
    const transport = await this.getTransport();
    const { attempts } = await withRetries(
      async () => {
        try {
          await withTimeout(transport.sendMail(mail), options.timeoutMs);
        } catch (error) {
          if (!certainlyNotSent(error)) uncertain.value = true;
          throw smtpFailure(error, options.timeoutMs, this.description, label);
        }
      },
      { retries: options.retries, mayContinue: options.mayContinue, span: options.span },
    );
    return attempts;
  }

  private getTransport(): Promise<Transporter> {
    if (this.closed) return Promise.reject(new TaskError('the service is shutting down; the SMTP connection is closed', { code: 'shutting-down' }));
    if (!this.resolution.ok) return Promise.reject(new TaskError(this.resolution.error, { code: 'smtp-not-configured' }));
    // One transport per process, even when the first messages are sent concurrently.
    return (this.transport ??= this.createTransport(this.resolution.connection));
  }

  /**
   * nodemailer is loaded with the first message, not at start-up: it is a large part of what
   * `serve` would load before its ready line (docs/performance.md, "Libraries loaded on first
   * use"), and many applications send no mail.
   */
  private async createTransport(c: SmtpConnection): Promise<Transporter> {
    const [{ default: nodemailer }, { default: SMTPPool }] = await Promise.all([import('nodemailer'), import('nodemailer/lib/smtp-pool/index.js')]);
    const pool = new SMTPPool({
      pool: true,
      // A dead or slow server must fail the task rather than hold it for nodemailer's minutes-long defaults.
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 60_000,
      disableUrlAccess: true,
      // Built from the resolved parts for --smtp-url too, never from the URL: one rule for TLS.
      host: c.host,
      port: c.port,
      secure: c.secure,
      requireTLS: c.requireTLS,
      ...(c.auth ? { auth: { user: c.auth.user, pass: c.auth.pass } } : {}),
    });
    const transport = nodemailer.createTransport(pool);
    // An idle pooled connection can be dropped by the server; nodemailer reports it here, and an
    // EventEmitter 'error' without a listener would take the process down.
    transport.on('error', (error: Error) => this.onPoolError(`SMTP connection to ${this.description}: ${error.message}`));
    return transport;
  }
}

/** Exposed for tests and dry-run parity: the nodemailer message built from a PreparedEmail. */
export function toMailOptions(message: PreparedEmail): Mail.Options {
  const from = singleAddress('from', message.from);
  const to = singleAddress('to', message.to);
  const cc = message.cc.filter((v) => v.trim() !== '').map((v) => singleAddress('cc', v));
  const bcc = message.bcc.filter((v) => v.trim() !== '').map((v) => singleAddress('bcc', v));
  const replyTo = message.replyTo !== null && message.replyTo.trim() !== '' ? singleAddress('reply-to', message.replyTo) : undefined;
  refuseControlCharacters('subject', message.subject);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new Error(`the header name ${JSON.stringify(name)} is not a valid header name`);
    refuseControlCharacters(`header ${name}`, value);
    headers[name] = value;
  }
  if (message.bodies.length === 0) throw new Error('the message has no body');
  if (message.bodies.some((b) => mailBodyTooLarge(b.content))) throw new Error(`a body is larger than ${MAIL_BODY_LIMIT_TEXT}`);
  return {
    from,
    to,
    ...(cc.length > 0 ? { cc } : {}),
    ...(bcc.length > 0 ? { bcc } : {}),
    ...(replyTo !== undefined ? { replyTo } : {}),
    subject: message.subject,
    ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
    headers,
    // Alternatives keep the bodies in the author's order; nodemailer's text/html fields would reorder them.
    alternatives: message.bodies.map((b) => ({ contentType: `${b.contentType}; charset=utf-8`, content: b.content })),
    attachments: message.attachments.map((a) => ({
      filename: a.filename,
      ...(a.contentType !== null ? { contentType: a.contentType } : {}),
      ...(a.source.kind === 'file' ? { path: a.source.path } : { content: a.source.content }),
      ...(a.cid !== null ? { cid: a.cid, contentDisposition: 'inline' as const } : {}),
    })),
    disableUrlAccess: true,
  };
}

/**
 * Each address field holds exactly one address: a value from a request that held a list
 * ("a@x, b@y") would otherwise turn one email into many, a relay for spam.
 */
function singleAddress(field: string, value: string): Mail.Address {
  const reading = readOneAddress(value);
  // The reason, not the value: this text reaches logs and stored jobs.
  if (!reading.ok)
    throw new Error(`the ${field} value is not exactly one email address${reading.reason === 'is not one email address' ? '' : `: it ${reading.reason}`}`);
  return { name: reading.mailbox.name, address: reading.mailbox.address };
}

function refuseControlCharacters(field: string, value: string): void {
  const problem = mailHeaderTextProblem(value);
  if (problem !== null) throw new Error(`the ${field} ${problem.reason}`);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { code: 'TASK_TIMEOUT' })), ms);
  });
  // The losing sendMail may still settle later; its rejection must not go unhandled.
  promise.catch(() => {});
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * True when the failed send certainly did not deliver the message: the server answered with a
 * reply code (a 4xx or 5xx refusal; it has not taken the message), or no connection was made.
 * A timeout or a connection lost on the way may have come after the server took it.
 */
function certainlyNotSent(error: unknown): boolean {
  const e = error as { message?: string; code?: string; responseCode?: number };
  if (typeof e.responseCode === 'number') return true;
  if (e.code === 'ECONNREFUSED' || e.code === 'EDNS') return true;
  return /\bconnect ECONNREFUSED\b/.test(e.message ?? '');
}

/** A failed send as a TaskError: a timeout, a connection that failed or broke, or the server's refusal. */
function smtpFailure(error: unknown, timeoutMs: number, server: string, label: string): TaskError {
  const e = error as { message?: string; code?: string; responseCode?: number; response?: string };
  if (e.code === 'TASK_TIMEOUT') {
    return new TaskError(`${label}: ${server} did not accept the message within ${timeoutMs} ms`, { code: 'timeout', transient: true, cause: error });
  }
  const responseCode = typeof e.responseCode === 'number' ? e.responseCode : null;
  const connectionLost = e.code !== undefined && TRANSIENT_CODES.has(e.code) && responseCode === null;
  // 4xx replies are the server's "try again later"; 5xx are refusals.
  const transient = connectionLost || (responseCode !== null && responseCode >= 400 && responseCode < 500);
  const code = responseCode !== null ? 'smtp-rejected' : 'connection';
  let text = e.message ?? String(error);
  // The refusal of requireTLS: say why the service stopped there, and what would work.
  if (e.code === 'ETLS')
    text += ' (credentials are sent only over TLS; give an SMTP server that offers STARTTLS, or TLS from the first byte: smtps:// or port 465)';
  // "write EPIPE" and "read ECONNRESET" say only what the socket saw: the server went away
  // in the middle of the conversation (test/reliability/faults.e2e.test.ts cuts it mid-DATA).
  if (/\b(?:EPIPE|ECONNRESET)\b/.test(text)) {
    return new TaskError(`${label}: ${server} closed the connection during the delivery (${text})`, { code: 'connection', transient, cause: error });
  }
  return new TaskError(`${label}: ${server}: ${text}`, { code, transient, cause: error });
}
