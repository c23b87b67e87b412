// What the command line decides for Email tasks: the SMTP server, given by --smtp-url or
// ENDPOINT_SERVICE_SMTP_URL. When given, it is the connection this kind uses, in place of the
// <server> of email-sending-configuration.xml (smtp-settings.ts). Plain data, checked once by
// the command line and read by this kind alone.

import { resolveSmtpConnection } from './smtp-settings.js';

export interface EmailTaskSettings {
  /** --smtp-url, else ENDPOINT_SERVICE_SMTP_URL (checked; may hold a password, so never shown); null: the file's settings. */
  readonly smtpUrl: string | null;
}

/** Without the option: email-sending-configuration.xml. */
export const DEFAULT_EMAIL_SETTINGS: EmailTaskSettings = { smtpUrl: null };

/** The options as commander parses them (src/cli/commands/serve.ts and src/cli/commands/worker.ts declare them). */
export interface EmailFlags {
  smtpUrl?: string;
}

/**
 * The settings, or the command's usage error (exit 2): a malformed URL would otherwise only show
 * as a failure of every task that sends mail. The value is never echoed: it may hold a password.
 * serve names the variable as "the environment variable …" and refuses a blank value in words
 * of its own; worker names the variable alone and lets the URL's parser answer a blank one.
 */
export function emailSettings(
  flags: EmailFlags,
  usage: (message: string) => never,
  role: 'serve' | 'worker',
  env: Readonly<Record<string, string | undefined>>,
): EmailTaskSettings {
  const fromEnv = env.ENDPOINT_SERVICE_SMTP_URL;
  const smtpUrl = flags.smtpUrl ?? (fromEnv !== undefined && fromEnv !== '' ? fromEnv : null);
  if (smtpUrl === null) return DEFAULT_EMAIL_SETTINGS;
  const source =
    flags.smtpUrl !== undefined ? '--smtp-url' : role === 'serve' ? 'the environment variable ENDPOINT_SERVICE_SMTP_URL' : 'ENDPOINT_SERVICE_SMTP_URL';
  if (role === 'serve' && smtpUrl.trim() === '') usage(`${source} is empty: give an SMTP URL such as smtp://mail.example:587, or leave the option out`);
  const checked = resolveSmtpConnection(null, smtpUrl, {});
  if (!checked.ok) usage(`${source}: ${checked.error}`);
  return { smtpUrl };
}
