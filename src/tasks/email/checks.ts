// What a message may hold, checked twice with the same functions: when the task is prepared,
// before the request's first side effect (a value of the request then refuses the request with
// 400 naming the parameter), and when the message is handed to nodemailer. So preparation
// cannot accept what delivery would refuse.

import type { ValueProblem } from '../../template/checked.js';

/**
 * The most a mail body may hold once expanded, in UTF-8 bytes, each <body> on its own.
 * nodemailer encodes a body on the event loop, and a long line costs it far more than its size:
 * a 9 MB field blocked the loop for seconds and took 400 MB. 1 MiB encodes in a few
 * milliseconds of loop at a time, and is more than any form's text.
 */
export const MAX_MAIL_BODY_BYTES = 1024 * 1024;
export const MAIL_BODY_LIMIT_TEXT = '1 MiB';

/**
 * Control characters in a subject or header: nodemailer passes NUL, VT, FF, DEL and the C1
 * range into the header raw (only non-ASCII text is encoded). TAB is text. CR and LF are
 * refused as line breaks by the header escaping before this.
 */
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/;

/** Why a subject or header value cannot go into a mail header; null when it can. */
export function mailHeaderTextProblem(value: string): ValueProblem | null {
  const match = CONTROL.exec(value);
  if (match === null) return null;
  return { at: match.index, reason: /[\r\n]/.test(match[0]) ? 'contains a line break' : 'contains a control character' };
}

/** Whether an expanded body is over MAX_MAIL_BODY_BYTES; the length test first spares counting bytes of short bodies. */
export function mailBodyTooLarge(content: string): boolean {
  return content.length * 3 > MAX_MAIL_BODY_BYTES && Buffer.byteLength(content, 'utf8') > MAX_MAIL_BODY_BYTES;
}
