// CONTRACT: pure, no I/O (attachments are referenced, not read). Expands an Email task for one request.
//
// Addresses and the subject use 'header' escaping, so a CR or LF in them throws
// UnsafeValueError; a field that expands to several addresses throws it too, so request data
// cannot add recipients. Any error thrown here is a failure of the task.
import { extname, posix } from 'node:path';
import addressparser from 'nodemailer/lib/addressparser/index.js';
import { parseOneAddress } from '../../email-address.js';
import type { EmailSettings } from '../../compiler/ast.js';
import type { Condition, Template } from '../../template/types.js';
import { contentTypeFor } from '../../content-types.js';
import { evaluateCondition } from '../../template/condition.js';
import { placeholdersOf, UnsafeValueError } from '../../template/escape.js';
import { expandTemplate, type ExpansionScope } from '../../template/expand.js';
import type { Upload } from '../../upload.js';
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
  const subject = expandTemplate(task.subject, scope);

  const headers: Record<string, string> = {};
  for (const header of settings?.headers ?? []) headers[header.name] = expandTemplate(header.value, scope);

  const bodies: PreparedEmailBody[] = task.bodies.map((b) => ({ contentType: b.contentType, content: expandTemplate(b.template, scope) }));

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
  if (addressparser(value, { flatten: true }).length > 1) {
    throw new UnsafeValueError(`the <${field}> value holds several addresses; write one address per <${field}>`, { reason: 'holds several email addresses', culprits });
  }
  if (parseOneAddress(value) === null) {
    throw new UnsafeValueError(`the <${field}> value is not exactly one email address`, { reason: 'is not one email address', culprits });
  }
  return value;
}
