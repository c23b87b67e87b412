// CONTRACT: pure, no I/O (attachments are referenced, not read). Expands an Email task for one request.
//
// Addresses and the subject use 'header' escaping, so a CR or LF in them throws
// UnsafeValueError; a field that expands to several addresses throws it too, so request data
// cannot add recipients. Addresses, subject, headers and body sizes are checked with the
// functions delivery checks them with again (checks.ts, email-address.ts), so what is prepared
// here is what is sent. Any error thrown here is a failure of the task.
import { extname, posix } from 'node:path';
import { readOneAddress } from '../../email-address.js';
import type { EmailSettings } from '../../compiler/ast.js';
import type { Condition, Template } from '../../template/types.js';
import { contentTypeFor } from '../../content-types.js';
import { evaluateCondition } from '../../template/condition.js';
import { placeholdersOf, UnsafeValueError } from '../../template/escape.js';
import { expandChecked } from '../../template/checked.js';
import { expandTemplate, type ExpansionScope, type FilledRange, type PlaceholderPart } from '../../template/expand.js';
import type { Upload } from '../../upload.js';
import { MAIL_BODY_LIMIT_TEXT, MAX_MAIL_BODY_BYTES, mailBodyTooLarge, mailHeaderTextProblem } from './checks.js';
import type { EmailTask, PreparedAttachment, PreparedEmail, PreparedEmailBody } from './types.js';

/**
 * @param separator the endpoint's multiple-value-separator, for attachment conditions.
 */
export function prepareEmails(
  task: EmailTask,
  scope: ExpansionScope,
  uploads: readonly Upload[],
  settings: EmailSettings | null,
  separator: string,
): PreparedEmail[] {
  const from = expandAddress(task.from, scope, 'from');
  // An optional copy address left empty by the request is dropped rather than failing the task.
  const cc = task.cc.map((t) => expandAddress(t, scope, 'cc', true)).filter((a) => a !== '');
  const bcc = task.bcc.map((t) => expandAddress(t, scope, 'bcc', true)).filter((a) => a !== '');
  const replyTo = task.replyTo === null ? null : expandAddress(task.replyTo, scope, 'reply-to', true) || null;
  const subject = expandChecked(task.subject, scope, 'the subject', mailHeaderTextProblem);

  const headers: Record<string, string> = {};
  for (const header of settings?.headers ?? []) headers[header.name] = expandChecked(header.value, scope, `the ${header.name} header`, mailHeaderTextProblem);

  const bodies: PreparedEmailBody[] = task.bodies.map((b) => ({ contentType: b.contentType, content: expandBody(b.template, scope) }));

  const attachments: PreparedAttachment[] = [];
  for (const attachment of task.attachments) {
    if (!holds(attachment.condition, scope, separator)) continue;
    if (attachment.kind === 'static') {
      attachments.push({
        filename: posix.basename(attachment.filename.replace(/\\/g, '/')),
        contentType: contentTypeFor(extname(attachment.filename)),
        source: { kind: 'file', path: attachment.absolutePath },
        cid: null,
      });
    } else {
      for (const upload of uploads) {
        attachments.push({
          filename: upload.filename,
          contentType: upload.contentType === '' ? contentTypeFor(extname(upload.filename)) : upload.contentType,
          source: upload.source,
          cid: null,
        });
      }
    }
  }
  // One part per cid, even when several bodies show the same image.
  const cids = new Set<string>();
  for (const body of task.bodies) {
    for (const image of body.inlineImages) {
      if (cids.has(image.cid)) continue;
      cids.add(image.cid);
      attachments.push({
        filename: posix.basename(image.absolutePath.replace(/\\/g, '/')),
        contentType: contentTypeFor(extname(image.absolutePath)),
        source: { kind: 'file', path: image.absolutePath },
        cid: image.cid,
      });
    }
  }

  return task.to.map((t) => ({
    from,
    to: expandAddress(t, scope, 'to'),
    cc,
    bcc,
    replyTo,
    subject,
    headers,
    bodies,
    attachments,
  }));
}

function holds(condition: Condition | null, scope: ExpansionScope, separator: string): boolean {
  return condition === null || evaluateCondition(condition, scope, separator);
}

/**
 * One address per field: `a@x, b@y` from a parameter would otherwise add a recipient, and a
 * value that is no address would fail only at delivery, after the other tasks have run.
 * A display expansion (dry-run's masked scope) is not checked: its values are stand-ins, and
 * the real values were checked with the real scope.
 */
function expandAddress(template: Template, scope: ExpansionScope, field: string, optional = false): string {
  const value = expandTemplate(template, scope).trim();
  const culprits = placeholdersOf(template);
  if (value === '') {
    if (optional) return '';
    throw new UnsafeValueError(`the <${field}> address is empty`, { reason: `is empty, and <${field}> needs an address`, culprits });
  }
  if (scope.verbatim !== undefined) return value;
  const reading = readOneAddress(value);
  if (!reading.ok) {
    const what = reading.reason === 'holds several email addresses' ? `holds several addresses; write one address per <${field}>` : reading.reason;
    throw new UnsafeValueError(`the <${field}> value ${what}`, { reason: reading.reason, culprits });
  }
  return value;
}

/**
 * A body over MAX_MAIL_BODY_BYTES blames the placeholders with the longest values, as many as
 * it takes for the rest to fit: those are what made it too large.
 */
function expandBody(template: Template, scope: ExpansionScope): string {
  const content = expandTemplate(template, scope);
  if (!mailBodyTooLarge(content)) return content;
  const filled: FilledRange[] = [];
  expandTemplate(template, scope, filled);
  const sizes = filled.map((range) => ({ part: range.part, bytes: Buffer.byteLength(content.slice(range.start, range.end), 'utf8') })).sort((a, b) => b.bytes - a.bytes);
  let excess = Buffer.byteLength(content, 'utf8') - MAX_MAIL_BODY_BYTES;
  const culprits: PlaceholderPart[] = [];
  for (const { part, bytes } of sizes) {
    if (excess <= 0) break;
    if (!culprits.includes(part)) culprits.push(part);
    excess -= bytes;
  }
  const reason = `makes the mail body larger than ${MAIL_BODY_LIMIT_TEXT}`;
  throw new UnsafeValueError(`the mail body is larger than ${MAIL_BODY_LIMIT_TEXT} once expanded`, { reason, culprits: excess <= 0 ? culprits : [] });
}
