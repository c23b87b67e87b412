// What the command line decides for HttpRequest tasks (serve and worker take the same options):
// the hosts they may call, whether private addresses are refused, whether POST and PATCH carry
// an Idempotency-Key. Plain data, checked once by the command line and read by this kind alone;
// `<response-from-url>` follows the same host policy (outboundPolicy, through tasks/settings.ts).

import { parseHostAllowlist } from '../host-allowlist.js';
import type { OutboundPolicy } from '../outbound.js';

export interface HttpRequestTaskSettings {
  /** --allow-task-host, its values as given (checked when built); null: any host. */
  readonly allowedHosts: readonly string[] | null;
  /** --deny-private-addresses: no connection to loopback, private, link-local or unspecified addresses. */
  readonly denyPrivateAddresses: boolean;
  /** An Idempotency-Key on POST and PATCH unless the task writes one (--no-idempotency-key: false). */
  readonly idempotencyKeys: boolean;
}

/** Without the options: any host, any address, keys sent. */
export const DEFAULT_HTTP_REQUEST_SETTINGS: HttpRequestTaskSettings = { allowedHosts: null, denyPrivateAddresses: false, idempotencyKeys: true };

/** The options as commander parses them (src/cli/commands/serve.ts and src/cli/commands/worker.ts declare them). */
export interface HttpRequestFlags {
  allowTaskHost: string[];
  denyPrivateAddresses?: boolean;
  /** commander's negated flag: false with --no-idempotency-key. */
  idempotencyKey: boolean;
}

/** The settings, or the command's usage error (exit 2) for a value that cannot be used. */
export function httpRequestSettings(flags: HttpRequestFlags, usage: (message: string) => never): HttpRequestTaskSettings {
  let allowedHosts: readonly string[] | null = null;
  if (flags.allowTaskHost.length > 0) {
    const parsed = parseHostAllowlist(flags.allowTaskHost);
    if (!parsed.ok) usage(`--allow-task-host: ${parsed.error}`);
    allowedHosts = [...flags.allowTaskHost];
  }
  return { allowedHosts, denyPrivateAddresses: flags.denyPrivateAddresses === true, idempotencyKeys: flags.idempotencyKey };
}

/**
 * Where the service's own requests may go. The list is parsed again here rather than kept
 * parsed, so that the settings stay plain data (a BlockList does not survive a message between
 * processes); it was checked when the settings were built, so it cannot fail.
 */
export function outboundPolicy(settings: HttpRequestTaskSettings): OutboundPolicy {
  if (settings.allowedHosts === null) return { allowedHosts: null, denyPrivateAddresses: settings.denyPrivateAddresses };
  const parsed = parseHostAllowlist(settings.allowedHosts);
  if (!parsed.ok) throw new Error(`--allow-task-host: ${parsed.error}`);
  return { allowedHosts: parsed.list, denyPrivateAddresses: settings.denyPrivateAddresses };
}
