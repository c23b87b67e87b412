// A task made concrete for one request: what would go on the wire. The same prepared value
// is sent by serve and printed by dry-run, so a plan never drifts from what runs.

export interface PreparedHttpRequest {
  readonly method: string;
  readonly url: string;
  /** Header names lower-case. Includes content-type for bodies and authorization for basic auth. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | null;
  /** Lower-case names of headers whose value is secret (basic auth, ${env:...}): masked in plans and logs. */
  readonly secretHeaders: readonly string[];
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
}
