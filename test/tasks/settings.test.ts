// The task kinds' settings: built from the options as commander parses them, refused with the
// command's usage error, and plain data that crosses between processes unchanged.
import { describe, expect, it } from 'vitest';
import { emailSettings } from '../../src/tasks/email/settings.js';
import { DEFAULT_HTTP_REQUEST_SETTINGS, httpRequestSettings, outboundPolicy } from '../../src/tasks/http-request/settings.js';
import { urlRefusal } from '../../src/tasks/outbound.js';
import { DEFAULT_TASK_SETTINGS, outboundPolicyOf, type TaskSettings } from '../../src/tasks/settings.js';

/** A usage error as the command line raises it: the message, and nothing returned. */
function usage(message: string): never {
  throw new Error(message);
}

/** What commander hands over when none of the task options is given. */
const NO_FLAGS = { allowTaskHost: [] as string[], idempotencyKey: true };

describe('HttpRequest settings', () => {
  it('without the options: the defaults', () => {
    expect(httpRequestSettings(NO_FLAGS, usage)).toEqual(DEFAULT_HTTP_REQUEST_SETTINGS);
  });

  it('keeps the options as given', () => {
    const settings = httpRequestSettings(
      { allowTaskHost: ['api.example.test,127.0.0.1', '*.hooks.example.test'], denyPrivateAddresses: true, idempotencyKey: false },
      usage,
    );
    expect(settings).toEqual({ allowedHosts: ['api.example.test,127.0.0.1', '*.hooks.example.test'], denyPrivateAddresses: true, idempotencyKeys: false });
  });

  it('refuses a host that is not one, naming the option', () => {
    expect(() => httpRequestSettings({ ...NO_FLAGS, allowTaskHost: ['https://api.example.test'] }, usage)).toThrow(
      /^--allow-task-host: "https:\/\/api.example.test" is not a host name/,
    );
    expect(() => httpRequestSettings({ ...NO_FLAGS, allowTaskHost: ['a.example,'] }, usage)).toThrow('--allow-task-host: an empty host in "a.example,"');
  });

  it('makes the policy the service’s own requests follow', () => {
    const policy = outboundPolicy(httpRequestSettings({ ...NO_FLAGS, allowTaskHost: ['API.example.test.'], denyPrivateAddresses: true }, usage));
    expect(urlRefusal(policy, new URL('https://api.example.test/x'))).toBeNull();
    expect(urlRefusal(policy, new URL('https://other.example.test/x'))).toBe(
      'the host "other.example.test" is not allowed: --allow-task-host permits only api.example.test',
    );
    expect(outboundPolicy(DEFAULT_HTTP_REQUEST_SETTINGS)).toEqual({ allowedHosts: null, denyPrivateAddresses: false });
  });
});

describe('Email settings', () => {
  const env = (value: string | undefined) => ({ ENDPOINT_SERVICE_SMTP_URL: value });

  it('--smtp-url, else ENDPOINT_SERVICE_SMTP_URL, else none (an empty variable counts as unset)', () => {
    expect(emailSettings({ smtpUrl: 'smtp://a.example:2525' }, usage, 'serve', env('smtp://b.example'))).toEqual({ smtpUrl: 'smtp://a.example:2525' });
    expect(emailSettings({}, usage, 'worker', env('smtp://b.example'))).toEqual({ smtpUrl: 'smtp://b.example' });
    expect(emailSettings({}, usage, 'serve', env(''))).toEqual({ smtpUrl: null });
    expect(emailSettings({}, usage, 'worker', {})).toEqual(DEFAULT_TASK_SETTINGS.email);
  });

  it('serve refuses a URL that cannot be used, naming where it came from', () => {
    expect(() => emailSettings({ smtpUrl: 'foo' }, usage, 'serve', {})).toThrow(/^--smtp-url: the SMTP URL is not a valid URL/);
    expect(() => emailSettings({ smtpUrl: ' ' }, usage, 'serve', {})).toThrow(/^--smtp-url is empty: /);
    expect(() => emailSettings({}, usage, 'serve', env('foo'))).toThrow(/^the environment variable ENDPOINT_SERVICE_SMTP_URL: the SMTP URL is not a valid URL/);
    expect(() => emailSettings({}, usage, 'serve', env(' '))).toThrow(/^the environment variable ENDPOINT_SERVICE_SMTP_URL is empty: /);
  });

  it('worker names the variable alone, and leaves a blank URL to the parser', () => {
    expect(() => emailSettings({}, usage, 'worker', env('foo'))).toThrow(/^ENDPOINT_SERVICE_SMTP_URL: the SMTP URL is not a valid URL/);
    expect(() => emailSettings({ smtpUrl: '' }, usage, 'worker', {})).toThrow(/^--smtp-url: no SMTP server is configured/);
  });

  it('never echoes the URL, which may hold a password', () => {
    for (const role of ['serve', 'worker'] as const) {
      expect(() => emailSettings({ smtpUrl: 'smtp://mailer:Secret-77@mail.example:587?ignoreTLS=true' }, usage, role, {})).toThrow(/takes no options/);
      expect(() => emailSettings({ smtpUrl: 'smtp://mailer:Secret-77@mail.example:587?ignoreTLS=true' }, usage, role, {})).not.toThrow(/Secret-77/);
    }
  });
});

describe('the record of every kind', () => {
  const built: TaskSettings = {
    'http-request': httpRequestSettings({ allowTaskHost: ['10.1.0.0/16', '[::1]'], denyPrivateAddresses: true, idempotencyKey: false }, usage),
    email: emailSettings({ smtpUrl: 'smtps://user:pw@mail.example' }, usage, 'serve', {}),
  };

  it('survives serialisation unchanged, and makes the same policy after it', () => {
    for (const settings of [built, DEFAULT_TASK_SETTINGS]) {
      expect(structuredClone(settings)).toEqual(settings);
      expect(JSON.parse(JSON.stringify(settings))).toEqual(settings);
    }
    const after = outboundPolicyOf(JSON.parse(JSON.stringify(built)) as TaskSettings);
    for (const url of ['http://10.1.2.3/', 'http://[::1]:8080/', 'http://10.2.0.1/', 'http://192.168.0.1/', 'https://api.example.test/']) {
      expect(urlRefusal(after, new URL(url)), url).toBe(urlRefusal(outboundPolicyOf(built), new URL(url)));
    }
    expect(urlRefusal(after, new URL('http://10.1.2.3/'))).toBeNull();
    expect(urlRefusal(after, new URL('http://192.168.0.1/'))).toMatch(/not allowed/);
  });
});
