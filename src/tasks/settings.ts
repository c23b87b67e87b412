// The settings of every task kind, one member per kind (named as its `kind`): built once by the
// command that runs tasks (serve, worker) from its options, then handed through the server, the
// queue and the task engine untouched to the kinds, each of which reads its own member. A kind's
// member, its defaults and how its options make it are the kind's own settings.ts.
//
// Plain data (strings, booleans, null), so that the whole record can cross between processes.

import { DEFAULT_EMAIL_SETTINGS, type EmailFlags, type EmailTaskSettings } from './email/settings.js';
import { DEFAULT_HTTP_REQUEST_SETTINGS, outboundPolicy, type HttpRequestFlags, type HttpRequestTaskSettings } from './http-request/settings.js';
import type { OutboundPolicy } from './outbound.js';

export interface TaskSettings {
  readonly 'http-request': HttpRequestTaskSettings;
  readonly email: EmailTaskSettings;
}

/** Every kind's defaults: what dry-run shows, and what a process started without the options does. */
export const DEFAULT_TASK_SETTINGS: TaskSettings = { 'http-request': DEFAULT_HTTP_REQUEST_SETTINGS, email: DEFAULT_EMAIL_SETTINGS };

/** Every kind's options, as commander parses them: what a command that runs tasks declares. */
export type TaskFlags = HttpRequestFlags & EmailFlags;

/**
 * The policy of the service's own requests: `<response-from-url>` goes where HttpRequest tasks
 * may go (--allow-task-host, --deny-private-addresses), so the server has one policy for both.
 */
export function outboundPolicyOf(settings: TaskSettings): OutboundPolicy {
  return outboundPolicy(settings['http-request']);
}
