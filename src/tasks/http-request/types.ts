// An HttpRequest task as compiled, and as prepared for one request: what goes on the wire.
// The same prepared value is sent by serve and printed by dry-run.

import type { Task } from '../../compiler/ast.js';
import type { NamedTemplate, Template } from '../../template/types.js';
import type { RawBody } from '../../upload.js';
import type { PreparedSigning, RelaySigning } from './sign.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

export type RequestBody =
  | { readonly kind: 'json'; readonly template: Template }
  | { readonly kind: 'xml'; readonly template: Template }
  | { readonly kind: 'form'; readonly parameters: readonly NamedTemplate[] }
  /** <forward-request-body/>: the request body as received, with its Content-Type. */
  | { readonly kind: 'forward' };

export interface HttpRequestTask extends Task {
  readonly kind: 'http-request';
  readonly url: Template;
  /** Resolved: explicit, else POST with a body, else GET. */
  readonly method: HttpMethod;
  readonly getParameters: readonly NamedTemplate[];
  readonly headers: readonly NamedTemplate[];
  readonly basicAuth: { readonly username: Template; readonly password: Template } | null;
  readonly body: RequestBody | null;
  /** <sign>: the request is signed for its receiver (Standard Webhooks); null: not signed. */
  readonly sign: RelaySigning | null;
}

export interface PreparedHttpRequest {
  readonly method: string;
  readonly url: string;
  /** Header names lower-case. Includes content-type for bodies and authorization for basic auth. */
  readonly headers: Readonly<Record<string, string>>;
  /** Text the task wrote, or the request's own body forwarded byte for byte. */
  readonly body: string | RawBody | null;
  /** Lower-case names of headers whose value is secret (basic auth, ${env:...}): masked in plans and logs. */
  readonly secretHeaders: readonly string[];
  /** <sign>: each attempt adds webhook-id, webhook-timestamp and webhook-signature; null when not signed, or prepared only to be shown. */
  readonly signing: PreparedSigning | null;
}
