// Where Email tasks connect (docs/behaviour.md, "`serve`"): --smtp-url /
// ENDPOINT_SERVICE_SMTP_URL replaces the file's connection settings; the file's headers apply
// either way (the prepare step puts them on each message).

import type { EmailSettings } from '../../compiler/ast.js';
import type { SystemParameter, Template } from '../../template/types.js';
import { expandTemplate, type ExpansionScope } from '../../template/expand.js';

export interface SmtpConnection {
  /** nodemailer connection URL (smtp: or smtps:), or null when host/port are given instead. */
  readonly url: string | null;
  readonly host: string | null;
  readonly port: number | null;
  /** Implicit TLS from the first byte. */
  readonly secure: boolean;
  /** Refuse to go on without STARTTLS: credentials never cross the wire in clear. */
  readonly requireTLS: boolean;
  readonly auth: { readonly user: string; readonly pass: string } | null;
  /** For logs and errors: host and port only, never credentials. */
  readonly description: string;
}

export type SmtpResolution = { readonly ok: true; readonly connection: SmtpConnection } | { readonly ok: false; readonly error: string };

const SUBMISSION_PORT = 587;
const SMTP_PORT = 25;
const SMTPS_PORT = 465;

/**
 * Why a URL of another scheme is refused. `host:port` parses as a URL whose scheme is the host
 * (`localhost:2525` is scheme "localhost"): say what to put before it. The text is echoed only
 * when it is such a bare host and port, since a URL may hold a password.
 */
function schemeProblem(text: string, url: URL): string {
  const trimmed = text.trim();
  if (/^[A-Za-z0-9.-]+:\d+$/.test(trimmed)) return `the SMTP URL needs smtp:// or smtps:// before the host: write smtp://${trimmed} (or smtps://${trimmed} for TLS from the first byte)`;
  if (!trimmed.includes('//')) return 'the SMTP URL needs smtp:// or smtps:// before the host, as in smtp://[user:password@]host[:port]';
  return `the SMTP URL must start with smtp:// or smtps://, not ${url.protocol}//`;
}

export function resolveSmtpConnection(
  settings: EmailSettings | null,
  smtpUrl: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): SmtpResolution {
  if (smtpUrl !== undefined && smtpUrl !== '') {
    let url: URL;
    try {
      url = new URL(smtpUrl);
    } catch {
      return { ok: false, error: 'the SMTP URL is not a valid URL (expected smtp://[user:password@]host[:port] or smtps://…)' };
    }
    if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') return { ok: false, error: schemeProblem(smtpUrl, url) };
    // nodemailer would quietly connect to localhost instead.
    if (url.hostname === '') return { ok: false, error: 'the SMTP URL names no host (expected smtp://[user:password@]host[:port] or smtps://…)' };
    const secure = url.protocol === 'smtps:';
    const port = url.port !== '' ? Number(url.port) : secure ? SMTPS_PORT : SMTP_PORT;
    return {
      ok: true,
      connection: {
        url: smtpUrl,
        host: null,
        port: null,
        secure,
        requireTLS: false,
        auth: null,
        description: `${url.protocol}//${url.hostname}:${port}`,
      },
    };
  }
  if (settings === null) {
    return {
      ok: false,
      error: 'no SMTP server is configured: give --smtp-url, set ENDPOINT_SERVICE_SMTP_URL, or add <server> to email-sending-configuration.xml',
    };
  }
  const scope = settingsScope(env);
  try {
    const host = expandTemplate(settings.server, scope).trim();
    if (host === '') return { ok: false, error: 'the <server> of email-sending-configuration.xml is empty' };
    const credentials = settings.username !== null && settings.password !== null;
    const port = settings.port ?? (credentials ? SUBMISSION_PORT : SMTP_PORT);
    const auth = credentials
      ? { user: expand(settings.username!, scope), pass: expand(settings.password!, scope) }
      : null;
    // Port 465 speaks TLS from the start; STARTTLS there would never be offered.
    const secure = port === SMTPS_PORT;
    return {
      ok: true,
      connection: {
        url: null,
        host,
        port,
        secure,
        requireTLS: credentials && !secure,
        auth,
        description: `smtp${secure ? 's' : ''}://${host}:${port}`,
      },
    };
  } catch (error) {
    return { ok: false, error: `email-sending-configuration.xml: ${(error as Error).message}` };
  }
}

function expand(template: Template, scope: ExpansionScope): string {
  return expandTemplate(template, scope);
}

// The settings file may use only ${env:...}; the other parts of a scope are never read.
function settingsScope(env: Readonly<Record<string, string | undefined>>): ExpansionScope {
  const system = {} as Record<SystemParameter, string>;
  return { parameters: new Map(), system, env };
}
