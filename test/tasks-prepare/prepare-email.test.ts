import { describe, expect, it } from 'vitest';
import type { EmailSettings } from '../../src/compiler/ast.js';
import type { Upload } from '../../src/upload.js';
import { prepareEmails } from '../../src/tasks/email/prepare.js';
import { UnsafeValueError } from '../../src/template/escape.js';
import { MissingValueError } from '../../src/template/expand.js';
import { at, compare, emailTask, named, predicate, scope, tpl } from './ast-builders.js';

const SEP = '||';
const upload = (filename: string, content: string, contentType = 'text/plain'): Upload => ({
  fieldName: 'file',
  filename,
  contentType,
  size: Buffer.byteLength(content),
  source: { kind: 'buffer', content: Buffer.from(content) },
});

describe('prepareEmails: messages and addresses', () => {
  it('sends one message per <to>, each with cc, bcc and reply-to', () => {
    const task = emailTask({
      from: tpl('Shop <shop@example.com>', 'header'),
      to: [tpl('${email}', 'header'), tpl('sales@example.com', 'header')],
      cc: [tpl('audit@example.com', 'header')],
      bcc: [tpl('archive@example.com', 'header'), tpl('${env:BCC}', 'header')],
      replyTo: tpl('help@example.com', 'header'),
      subject: tpl('Order ${order}', 'header'),
    });
    const emails = prepareEmails(task, scope({ email: 'ann@example.org', order: '17' }, { env: { BCC: 'boss@example.com' } }), [], null, SEP);
    expect(emails.map((e) => e.to)).toEqual(['ann@example.org', 'sales@example.com']);
    for (const e of emails) {
      expect(e.from).toBe('Shop <shop@example.com>');
      expect(e.cc).toEqual(['audit@example.com']);
      expect(e.bcc).toEqual(['archive@example.com', 'boss@example.com']);
      expect(e.replyTo).toBe('help@example.com');
      expect(e.subject).toBe('Order 17');
      expect(e.headers).toEqual({});
    }
  });

  it.each([
    ['subject', { subject: tpl('Hi ${name}', 'header') }],
    ['to', { to: [tpl('${name}', 'header')] }],
    ['from', { from: tpl('${name}', 'header') }],
    ['cc', { cc: [tpl('${name}', 'header')] }],
    ['reply-to', { replyTo: tpl('${name}', 'header') }],
  ])('refuses CR/LF in %s', (_field, overrides) => {
    const task = emailTask(overrides);
    expect(() => prepareEmails(task, scope({ name: 'a@example.com\r\nBcc: victim@example.com' }), [], null, SEP)).toThrow(UnsafeValueError);
  });

  it('refuses a <to> that expands to several addresses', () => {
    const task = emailTask({ to: [tpl('${email}', 'header')] });
    expect(() => prepareEmails(task, scope({ email: 'a@example.com, b@example.com' }), [], null, SEP)).toThrow(/several addresses/);
    expect(() => prepareEmails(task, scope({ email: 'a@example.com;b@example.com' }), [], null, SEP)).toThrow(UnsafeValueError);
  });

  it('accepts a display name with a comma in quotes', () => {
    const task = emailTask({ to: [tpl('${email}', 'header')] });
    expect(prepareEmails(task, scope({ email: '"Doe, Ann" <ann@example.com>' }), [], null, SEP)[0]!.to).toBe('"Doe, Ann" <ann@example.com>');
  });

  it('fails on an empty <to> but drops an empty cc, bcc or reply-to', () => {
    expect(() => prepareEmails(emailTask({ to: [tpl('${email}', 'header')] }), scope({ email: ' ' }), [], null, SEP)).toThrow(/<to> address is empty/);
    const task = emailTask({ cc: [tpl('${cc}', 'header')], bcc: [tpl('${cc}', 'header')], replyTo: tpl('${cc}', 'header') });
    const [email] = prepareEmails(task, scope({ cc: '' }), [], null, SEP);
    expect(email!.cc).toEqual([]);
    expect(email!.bcc).toEqual([]);
    expect(email!.replyTo).toBeNull();
  });

  it('returns one message per <to>', () => {
    expect(prepareEmails(emailTask({ to: [tpl('a@example.com', 'header'), tpl('b@example.com', 'header'), tpl('c@example.com', 'header')] }), scope(), [], null, SEP)).toHaveLength(3);
  });
});

describe('prepareEmails: bodies', () => {
  it('keeps bodies in order, HTML-escaping values in HTML and not in plain text', () => {
    const task = emailTask({
      bodies: [
        { contentType: 'text/plain', template: tpl('Hello ${name}', 'none'), inlineImages: [] },
        { contentType: 'text/html', template: tpl('<p>Hello ${name}</p>', 'html'), inlineImages: [] },
      ],
    });
    const [email] = prepareEmails(task, scope({ name: `<Ann & "Bob">` }), [], null, SEP);
    expect(email!.bodies).toEqual([
      { contentType: 'text/plain', content: 'Hello <Ann & "Bob">' },
      { contentType: 'text/html', content: '<p>Hello &lt;Ann &amp; &quot;Bob&quot;&gt;</p>' },
    ]);
  });

  it('propagates a missing environment variable', () => {
    const task = emailTask({ subject: tpl('${env:NOPE}', 'header') });
    expect(() => prepareEmails(task, scope(), [], null, SEP)).toThrow(MissingValueError);
  });
});

describe('prepareEmails: attachments', () => {
  it('references static files by path, named by basename, typed by extension', () => {
    const task = emailTask({
      attachments: [
        { kind: 'static', filename: 'docs/terms.pdf', absolutePath: '/app/static/docs/terms.pdf', condition: null },
        { kind: 'static', filename: 'logo.PNG', absolutePath: '/app/static/logo.PNG', condition: null },
        { kind: 'static', filename: 'data.unknownext', absolutePath: '/app/static/data.unknownext', condition: null },
      ],
    });
    const [email] = prepareEmails(task, scope(), [], null, SEP);
    expect(email!.attachments).toEqual([
      { filename: 'terms.pdf', contentType: 'application/pdf', source: { kind: 'file', path: '/app/static/docs/terms.pdf' }, cid: null },
      { filename: 'logo.PNG', contentType: 'image/png', source: { kind: 'file', path: '/app/static/logo.PNG' }, cid: null },
      { filename: 'data.unknownext', contentType: 'application/octet-stream', source: { kind: 'file', path: '/app/static/data.unknownext' }, cid: null },
    ]);
  });

  it('attaches every upload as a buffer', () => {
    const task = emailTask({ attachments: [{ kind: 'uploads', condition: null }] });
    const uploads = [upload('cv.pdf', '%PDF', 'application/pdf'), upload('note.txt', 'hi', '')];
    const [email] = prepareEmails(task, scope(), uploads, null, SEP);
    expect(email!.attachments).toEqual([
      { filename: 'cv.pdf', contentType: 'application/pdf', source: { kind: 'buffer', content: Buffer.from('%PDF') }, cid: null },
      { filename: 'note.txt', contentType: 'text/plain; charset=utf-8', source: { kind: 'buffer', content: Buffer.from('hi') }, cid: null },
    ]);
  });

  it('attaches an upload kept in a temporary file by its path, without reading it', () => {
    const task = emailTask({ attachments: [{ kind: 'uploads', condition: null }] });
    const spooled: Upload = { fieldName: 'cv', filename: 'cv.pdf', contentType: 'application/pdf', size: 9_000_000, source: { kind: 'file', path: '/nonexistent/upload-7' } };
    const [email] = prepareEmails(task, scope(), [spooled], null, SEP);
    expect(email!.attachments).toEqual([{ filename: 'cv.pdf', contentType: 'application/pdf', source: { kind: 'file', path: '/nonexistent/upload-7' }, cid: null }]);
  });

  it('evaluates each attachment condition with the endpoint separator', () => {
    const task = emailTask({
      attachments: [
        { kind: 'static', filename: 'gold.pdf', absolutePath: '/s/gold.pdf', condition: compare('${plan}', 'equals', 'gold') },
        { kind: 'static', filename: 'silver.pdf', absolutePath: '/s/silver.pdf', condition: compare('${plan}', 'equals', 'silver') },
        { kind: 'uploads', condition: predicate('${plan}', 'hasmultiple', true) },
      ],
    });
    const names = (plan: string, separator: string) =>
      prepareEmails(task, scope({ plan }), [upload('u.txt', 'x')], null, separator)[0]!.attachments.map((a) => a.filename);
    expect(names('gold', SEP)).toEqual(['gold.pdf']);
    expect(names('gold,silver', SEP)).toEqual([]);
    expect(names('gold,silver', ',')).toEqual(['gold.pdf', 'silver.pdf', 'u.txt']);
  });

  it('adds cid images of HTML bodies as inline parts, once per cid', () => {
    const image = { cid: 'img/logo.png', absolutePath: '/app/static/img/logo.png' };
    const task = emailTask({
      bodies: [
        { contentType: 'text/html', template: tpl('<img src="cid:img/logo.png">', 'html'), inlineImages: [image] },
        { contentType: 'text/html', template: tpl('<img src="cid:img/logo.png">', 'html'), inlineImages: [image] },
      ],
    });
    const [email] = prepareEmails(task, scope(), [], null, SEP);
    expect(email!.attachments).toEqual([
      { filename: 'logo.png', contentType: 'image/png', source: { kind: 'file', path: '/app/static/img/logo.png' }, cid: 'img/logo.png' },
    ]);
  });
});

describe('prepareEmails: settings headers', () => {
  const settings = (headers: EmailSettings['headers']): EmailSettings => ({ server: tpl('smtp.example.com', 'header'), port: null, username: null, password: null, headers, position: at() });

  it('adds the configuration headers, expanding ${env:...}', () => {
    const s = settings([named('X-Mailer', 'endpoint-service', 'header'), named('X-Tenant', '${env:TENANT}', 'header')]);
    const [email] = prepareEmails(emailTask(), scope({}, { env: { TENANT: 'acme' } }), [], s, SEP);
    expect(email!.headers).toEqual({ 'X-Mailer': 'endpoint-service', 'X-Tenant': 'acme' });
  });

  it('refuses CR/LF in a configuration header value', () => {
    const s = settings([named('X-Tenant', '${env:TENANT}', 'header')]);
    expect(() => prepareEmails(emailTask(), scope({}, { env: { TENANT: 'a\nb' } }), [], s, SEP)).toThrow(UnsafeValueError);
  });
});
