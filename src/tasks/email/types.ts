// An Email task as compiled, and as prepared for one request: one message per <to>. The same
// prepared messages are sent by serve and printed by dry-run.

import type { Task } from '../../compiler/ast.js';
import type { Condition, Template } from '../../template/types.js';

export interface EmailBody {
  readonly contentType: 'text/plain' | 'text/html';
  readonly template: Template;
  /** cid: images found in an HTML body: cid as written -> absolute path in static/. */
  readonly inlineImages: readonly { readonly cid: string; readonly absolutePath: string }[];
}

export type EmailAttachment =
  | {
      readonly kind: 'static';
      readonly filename: string;
      readonly absolutePath: string;
      readonly condition: Condition | null;
    }
  | { readonly kind: 'uploads'; readonly condition: Condition | null };

export interface EmailTask extends Task {
  readonly kind: 'email';
  readonly from: Template;
  readonly to: readonly Template[];
  readonly cc: readonly Template[];
  readonly bcc: readonly Template[];
  readonly replyTo: Template | null;
  readonly subject: Template;
  readonly bodies: readonly EmailBody[];
  readonly attachments: readonly EmailAttachment[];
}

export type PreparedAttachmentSource =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'buffer'; readonly content: Buffer };

export interface PreparedAttachment {
  readonly filename: string;
  readonly contentType: string | null;
  readonly source: PreparedAttachmentSource;
  /** Set for inline images referenced as cid: in an HTML body. */
  readonly cid: string | null;
}

export interface PreparedEmailBody {
  readonly contentType: 'text/plain' | 'text/html';
  readonly content: string;
}

/** One message: each <to> gets its own. */
export interface PreparedEmail {
  readonly from: string;
  readonly to: string;
  readonly cc: readonly string[];
  readonly bcc: readonly string[];
  readonly replyTo: string | null;
  readonly subject: string;
  /** Extra headers from email-sending-configuration.xml. */
  readonly headers: Readonly<Record<string, string>>;
  /** Several bodies form multipart/alternative, in order. */
  readonly bodies: readonly PreparedEmailBody[];
  readonly attachments: readonly PreparedAttachment[];
  /** `<…@domain>`, derived from the request, endpoint, task and message: the same in every attempt. */
  readonly messageId?: string;
}
