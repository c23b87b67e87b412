// The Email task kind: mail with attachments over SMTP. A message cannot be taken back, so
// mail is delivered last: once every other task of the request has finished, and only if
// none failed.

import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { parseOneAddress } from '../../email-address.js';
import type { TaskKind, TaskServices, TextLine } from '../kind.js';
import { EMAIL_CHILDREN, compileEmail } from './compile.js';
import { EmailDelivery } from './delivery.js';
import { prepareEmails } from './prepare.js';
import type { EmailAttachment, EmailTask, PreparedEmail } from './types.js';

const SECRET_MASK = '***';
export const UPLOADS_LABEL = '<files uploaded with the request>';

interface EmailServices extends TaskServices {
  readonly delivery: EmailDelivery;
}

export const emailKind: TaskKind<EmailTask, readonly PreparedEmail[], EmailServices> = {
  kind: 'email',
  classNames: ['Email', 'endpoints.task.EmailTask'],
  children: EMAIL_CHILDREN,
  hasOutputs: false,
  sendsMail: true,
  deliversLast: true,
  readsUploads: (task) => task.attachments.some((a) => a.kind === 'uploads'),
  compile: compileEmail,
  prepare: (task, scope, request) =>
    prepareEmails(task, scope, request.uploads, request.application.email, request.separator).map((message, index) => ({
      ...message,
      messageId: messageIdFor(scope.system['request-id'], scope.system.endpoint, task.id, index, message.from),
    })),

  createServices(options) {
    const { smtpUrl } = options.settings.email;
    const delivery = new EmailDelivery({
      settings: options.application.email,
      // Given on the command line, it is the connection, in place of the file's <server>.
      ...(smtpUrl !== null ? { smtpUrl } : {}),
      env: options.env,
      onPoolError: (text) => options.warn(text),
    });
    return { delivery, close: () => delivery.close() };
  },

  async execute(task, messages, services, control) {
    const report = await services.delivery.deliver(messages, {
      timeoutMs: task.timeoutMs,
      retries: task.retries,
      mayContinue: () => control.mayContinue(),
      span: control.span,
      ...(control.effects !== undefined ? { effects: control.effects } : {}),
    });
    if (!report.stopped) return { attempts: report.attempts };
    return { attempts: report.attempts, stopped: { done: report.sent === 0 ? null : `delivery stopped after ${report.sent} of ${messages.length} messages` } };
  },

  describe(task, input) {
    // Attachment conditions are decided here with real values (the shown scope masks them);
    // prepareEmails then receives only the attachments that will, or may, be attached.
    const kept: { attachment: EmailAttachment; maybe: string | null }[] = [];
    for (const attachment of task.attachments) {
      const holds = input.decide(attachment.condition);
      if (holds === false) continue;
      kept.push({ attachment, maybe: holds === null ? attachment.condition!.text : null });
    }
    const decided: EmailTask = { ...task, attachments: kept.map((k) => ({ ...k.attachment, condition: null })) };
    const prepared = prepareEmails(decided, input.shown, [], input.request.application.email, input.request.separator);

    const labels: string[] = [];
    let next = 0;
    const files = prepared.length > 0 ? prepared[0]!.attachments.filter((a) => a.cid === null) : [];
    for (const { attachment, maybe } of kept) {
      const label = attachment.kind === 'static' ? (files[next++]?.filename ?? basename(attachment.filename)) : UPLOADS_LABEL;
      labels.push(maybe === null ? label : `${label} (if ${maybe})`);
    }
    if (kept.some((k) => k.attachment.kind === 'uploads'))
      input.note(`${task.id}: a dry-run has no uploaded files; serve attaches every file uploaded with the request`);

    const settings = input.request.application.email;
    const secretHeaders = new Set((settings?.headers ?? []).filter((h) => h.value.parts.some((p) => p.kind === 'env')).map((h) => h.name));
    const emails = prepared.map((email) => ({
      from: email.from,
      to: [email.to],
      cc: email.cc,
      bcc: email.bcc,
      replyTo: email.replyTo,
      subject: email.subject,
      headers: Object.fromEntries(Object.entries(email.headers).map(([n, v]) => [n, secretHeaders.has(n) ? SECRET_MASK : v])),
      bodies: email.bodies.map((b) => ({ contentType: b.contentType, content: b.content })),
      attachments: labels,
      inline: email.attachments.filter((a) => a.cid !== null).map((a) => `${a.filename} (cid:${a.cid})`),
    }));

    const text: TextLine[] = [];
    emails.forEach((email, index) => {
      text.push({ indent: 6, head: `email ${index + 1} of ${emails.length}`, headStyle: 'bold', text: '' });
      const field = (name: string, value: string) => text.push({ indent: 8, text: `${name}: ${value}` });
      field('From', email.from);
      field('To', email.to.join(', '));
      if (email.cc.length > 0) field('Cc', email.cc.join(', '));
      if (email.bcc.length > 0) field('Bcc', email.bcc.join(', '));
      if (email.replyTo !== null) field('Reply-To', email.replyTo);
      field('Subject', email.subject);
      for (const [name, value] of Object.entries(email.headers)) field(name, value);
      if (email.attachments.length > 0) field('Attachments', email.attachments.join(', '));
      if (email.inline.length > 0) field('Inline images', email.inline.join(', '));
      for (const body of email.bodies) {
        text.push({ indent: 8, head: `-- ${body.contentType}`, headStyle: 'dim', text: '' });
        for (const line of body.content.split(/\r?\n/)) text.push({ indent: 8, text: line });
      }
    });
    // dry-run's JSON keeps to its documented members; the text format shows everything.
    return { member: 'emails', json: emails.map((e) => ({ from: e.from, to: e.to, subject: e.subject, attachments: e.attachments })), text };
  },
};

/**
 * A Message-ID that every attempt of the same message shares (a resend after a crash carries the
 * same one, so mail clients can recognise it): a hash of the request, endpoint, task and message.
 */
export function messageIdFor(requestId: string, endpoint: string, taskId: string, index: number, from: string): string {
  const hash = createHash('sha256').update(`${requestId}\n${endpoint}\n${taskId}\n${index}`).digest('hex').slice(0, 40);
  const domain = parseOneAddress(from)?.address.split('@').pop();
  return `<${hash}@${domain !== undefined && /^[A-Za-z0-9.-]+$/.test(domain) ? domain : 'endpoint-service.invalid'}>`;
}
