// serve's options as an operator meets them, through the built binary: the help shows values the
// options accept, and a bad value is refused at start-up (exit 2) rather than at request time.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot, run } from '../cli/helpers.js';
import { fixture, runServeToExit, StartedServices } from '../helpers/serve.js';

const services = new StartedServices();
const start = services.start;
afterAll(async () => {
  await services.stopAll();
});

/** `serve --help` on one line, so a default wrapped by commander still reads as one. */
async function serveHelp(): Promise<string> {
  const help = await run(['serve', '--help']);
  expect(help.exitCode).toBe(0);
  return help.stdout.replace(/\s+/g, ' ');
}

/** The `(default: …)` of one option: between its name and the next option's. */
function defaultOf(help: string, option: string): string {
  const from = help.indexOf(`${option} <`);
  const next = help.indexOf(' --', from + option.length);
  const match = /\(default: ([^)]+)\)/.exec(help.slice(from, next < 0 ? undefined : next));
  if (from < 0 || match === null) throw new Error(`no default shown for ${option} in: ${help}`);
  return match[1]!;
}

describe('serve --help and the defaults it shows', () => {
  it('shows durations and sizes in the unit the option takes', async () => {
    const help = await serveHelp();
    expect(defaultOf(help, '--request-timeout')).toBe('60s');
    expect(defaultOf(help, '--shutdown-timeout')).toBe('30s');
    expect(defaultOf(help, '--max-body-size')).toBe('10 MiB');
    expect(help).not.toMatch(/default: (60000|30000|10485760)\b/);
  });

  it('starts with exactly the defaults the help shows, given as options', async () => {
    const help = await serveHelp();
    const args = ['--request-timeout', '--shutdown-timeout', '--max-body-size'].flatMap((option) => [option, defaultOf(help, option)]);
    const service = await start(fixture('basic'), args);
    expect(service.stdout()).toBe(`endpoint-service listening on ${service.url}\n`);
    expect((await fetch(`${service.url}/empty`)).status).toBe(200);
  });

  it('refuses a duration without a unit (exit 2), saying how to write it', async () => {
    const result = await runServeToExit(fixture('basic'), ['--port', '0', '--workers', '1', '--request-timeout', '60000']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("'60000' is invalid");
    expect(result.stderr).toContain('60000ms');
  });

  it('refuses a duration longer than a timer can wait (exit 2)', async () => {
    const result = await runServeToExit(fixture('basic'), ['--port', '0', '--workers', '1', '--shutdown-timeout', '1000h']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('at most 596h');
  });
});

describe('a malformed SMTP URL is refused at start-up, not at the first mail', () => {
  const refused = async (args: string[], env: Record<string, string> = {}) => {
    const result = await runServeToExit(fixture('tasks'), ['--port', '0', '--workers', '1', ...args], { PEER: 'http://127.0.0.1:9', ...env });
    expect(result.code, args.join(' ')).toBe(2);
    expect(result.stdout, 'no ready line').toBe('');
    return result.stderr;
  };

  it('--smtp-url that is not a URL, not smtp: or smtps:, or names no host: exit 2 before listening', async () => {
    expect(await refused(['--smtp-url', 'foo'])).toMatch(/--smtp-url: the SMTP URL is not a valid URL/);
    expect(await refused(['--smtp-url', 'http://mail.example'])).toMatch(/--smtp-url: the SMTP URL must start with smtp:\/\/ or smtps:\/\//);
    expect(await refused(['--smtp-url', 'smtp://'])).toMatch(/--smtp-url: the SMTP URL names no host/);
    expect(await refused(['--smtp-url', ''])).toMatch(/--smtp-url is empty/);
    // nodemailer would read ignoreTLS=true from it and send the password in clear.
    const options = await refused(['--smtp-url', 'smtp://mailer:Secret-78@mail.example:587?ignoreTLS=true']);
    expect(options).toMatch(/--smtp-url: the SMTP URL takes no options/);
    expect(options).not.toContain('Secret-78');
  });

  it('ENDPOINT_SERVICE_SMTP_URL the same, named in the message', async () => {
    expect(await refused([], { ENDPOINT_SERVICE_SMTP_URL: 'foo' })).toMatch(/ENDPOINT_SERVICE_SMTP_URL: the SMTP URL is not a valid URL/);
  });

  it('does not print the URL, which may hold a password', async () => {
    expect(await refused(['--smtp-url', 'smtps://mailer:Secret-77@'])).not.toContain('Secret-77');
  });

  it('starts with a well-formed smtp: or smtps: URL (the server is only contacted for a mail)', async () => {
    for (const url of ['smtp://127.0.0.1:9', 'smtps://user:pw@127.0.0.1:9']) {
      const service = await start(fixture('tasks'), ['--smtp-url', url], { PEER: 'http://127.0.0.1:9' });
      expect(service.stdout()).toBe(`endpoint-service listening on ${service.url}\n`);
    }
  });
});

describe('--cors <origins>', () => {
  const file = fixture('basic');

  it('says so when the file was taken as the origins (exit 2), instead of only "missing argument"', async () => {
    for (const args of [
      ['--cors', file],
      ['--port', '0', '--cors', file, file],
    ]) {
      const result = await run(['serve', ...args]);
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`"${file}" is a file, not a list of origins`);
      expect(result.stderr).toContain("--cors '*'");
    }
  });

  it('is shown with its argument in the help and the README', async () => {
    const help = await serveHelp();
    expect(help).toContain('--cors <origins>');
    const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    expect(readme).toContain('--cors <origins>');
    expect(readme.match(/--cors(?! <origins>)/g)).toBeNull();
  });
});
