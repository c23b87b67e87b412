// Lints for what a configuration author may not have meant: a request parameter that decides
// where the service's own requests go, or whom it mails. Warnings only: some applications mean
// it, and `validate --max-warnings 0` lets CI insist.

import type { Position } from '../position.js';
import { destinationPlaceholders, isRequestParameter } from '../template/url.js';
import type { Template } from '../template/types.js';
import type { CompileContext } from './context.js';
import type { ClientGuard, NameScope } from './templates.js';

/** What the URL is, for the message. */
export type DestinationKind = 'task' | 'response-from-url' | 'redirect';

/** destination-from-request when a request parameter decides the scheme, host or port of `url`. */
export function lintDestination(ctx: CompileContext, url: Template, kind: DestinationKind, position: Position): void {
  const parts = destinationPlaceholders(url, isRequestParameter);
  if (parts.length === 0) return;
  const names = [...new Set(parts.flatMap((p) => (p.kind === 'parameter' ? [p.name] : [])))];
  ctx.diagnostics.report('destination-from-request', position, kind, names);
}

/**
 * recipient-from-request when a mail recipient (to, cc, bcc) comes from a request parameter and
 * nothing stops any client from using the endpoint: no guard of `scope.clientGuards` (hash
 * authentication, a CAPTCHA, a rate limit).
 */
export function lintRecipient(ctx: CompileContext, recipient: Template, scope: NameScope, position: Position): void {
  if (guarded(scope.clientGuards ?? [])) return;
  const names = [...new Set(recipient.parts.flatMap((p) => (p.kind === 'parameter' ? [p.name] : [])))];
  if (names.length > 0) ctx.diagnostics.report('recipient-from-request', position, names);
}

function guarded(guards: readonly ClientGuard[]): boolean {
  return guards.length > 0;
}
