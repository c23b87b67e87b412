// Where Email tasks connect (docs/behaviour.md, "`serve`"): --smtp-url /
// ENDPOINT_SERVICE_SMTP_URL replaces the file's connection settings; the file's headers apply
// either way (the prepare step puts them on each message).

import type { EmailSettings } from '../../compiler/ast.js';
import type { SystemParameter, Template } from '../../template/types.js';
import { expandTemplate, type ExpansionScope } from '../../template/expand.js';

export interface SmtpConnection {
  readonly host: string;
  readonly port: number;
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
 * The one rule for both sources (--smtp-url and email-sending-configuration.xml): TLS from the
 * first byte for smtps:// or port 465; otherwise, with credentials, STARTTLS is required, so a
 * server that does not offer it never sees the password (nodemailer would send AUTH PLAIN in
 * clear). Without a port: 465 for TLS, 587 (submission) with credentials, else 25.
 */
function connection(host: string, port: number | null, tlsAsked: boolean, auth: SmtpConnection['auth']): SmtpConnection {
  const resolvedPort = port ?? (tlsAsked ? SMTPS_PORT : auth !== null ? SUBMISSION_PORT : SMTP_PORT);
  // Port 465 speaks TLS from the start; STARTTLS there would never be offered.
  const secure = tlsAsked || resolvedPort === SMTPS_PORT;
  return {
    host,
    port: resolvedPort,
    secure,
    requireTLS: auth !== null && !secure,
    auth,
    description: `smtp${secure ? 's' : ''}://${host}:${resolvedPort}`,
  };
}

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
  if (smtpUrl !== undefined && smtpUrl !== '') return fromUrl(smtpUrl);
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
    const auth = credentials ? { user: expand(settings.username!, scope), pass: expand(settings.password!, scope) } : null;
    return { ok: true, connection: connection(host, settings.port, false, auth) };
  } catch (error) {
    return { ok: false, error: `email-sending-configuration.xml: ${(error as Error).message}` };
  }
}

/** The URL's parts, never the URL itself in a message: it may hold a password. */
function fromUrl(smtpUrl: string): SmtpResolution {
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    return { ok: false, error: 'the SMTP URL is not a valid URL (expected smtp://[user:password@]host[:port] or smtps://…)' };
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') return { ok: false, error: schemeProblem(smtpUrl, url) };
  // nodemailer would quietly connect to localhost instead.
  if (url.hostname === '') return { ok: false, error: 'the SMTP URL names no host (expected smtp://[user:password@]host[:port] or smtps://…)' };
  // nodemailer reads options from a query string (ignoreTLS=true, requireTLS=false, tls.…),
  // which would bypass the rule above; the connection is built from the parts below instead.
  if (url.search !== '' || smtpUrl.includes('?')) {
    return { ok: false, error: 'the SMTP URL takes no options ("?…"): give smtp://[user:password@]host[:port] or smtps://…' };
  }
  let auth: SmtpConnection['auth'] = null;
  if (url.username !== '' || url.password !== '') {
    try {
      auth = { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) };
    } catch {
      return { ok: false, error: 'the user or password of the SMTP URL is not validly percent-encoded' };
    }
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return { ok: true, connection: connection(host, url.port !== '' ? Number(url.port) : null, url.protocol === 'smtps:', auth) };
}

function expand(template: Template, scope: ExpansionScope): string {
  return expandTemplate(template, scope);
}

// The settings file may use only ${env:...}; the other parts of a scope are never read.
function settingsScope(env: Readonly<Record<string, string | undefined>>): ExpansionScope {
  const system = {} as Record<SystemParameter, string>;
  return { parameters: new Map(), system, env };
}
