// The service's own origin (docs/behaviour.md, "Origins"): the same-origin exception of --cors,
// and serve --public-url, which fixes ${base-url} and that exception to the URL clients reach the
// service at, whatever Host header a request carries. Through the real binary, with an HTTP peer
// (the CRM call counts whether the endpoint ran) and an SMTP peer (what the mail links to).
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../cli/helpers.js';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, StartedServices, type RunningService } from '../helpers/serve.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';

const FIXTURE = fixture('public-url');
const services = new StartedServices();
let peer: HttpPeer;
let smtp: SmtpPeer;

beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/crm/subscribers', { status: 201, body: 'stored' });
  smtp = await SmtpPeer.start();
});
afterAll(async () => {
  await services.stopAll();
  await peer?.close();
  await smtp?.close();
});

const start = (args: readonly string[]) => services.start(FIXTURE, ['--smtp-url', smtp.url, ...args], { PEER: peer.origin });

/** A form post with the Host (and Origin) a browser on another name would send; fetch cannot set Host. */
function subscribe(service: RunningService, email: string, headers: Record<string, string>, path = '/subscribe'): Promise<{ status: number; body: string }> {
  const body = `email=${encodeURIComponent(email)}`;
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${service.url}${path}`,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)), ...headers },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (c: string) => (text += c));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** The mail the request for `email` produced (its task runs after the answer). */
async function mailTo(email: string): Promise<string> {
  for (;;) {
    const mail = smtp.messages.find((m) => m.envelope.to.includes(email));
    if (mail !== undefined) return mail.parsed.text ?? '';
    await smtp.waitForMessages(smtp.messages.length + 1);
  }
}

/** Refused: 403, and neither the CRM nor the mail server heard of it (checked after a request that does run). */
async function expectRefused(service: RunningService, email: string, headers: Record<string, string>): Promise<void> {
  const answer = await subscribe(service, email, headers);
  expect(answer.status, answer.body).toBe(403);
  // A request without Origin runs; once its mail is in, the refused one would have been too.
  const sentinel = `sentinel-${email}`;
  expect((await subscribe(service, sentinel, {})).status).toBe(200);
  await mailTo(sentinel);
  expect(peer.requests.some((r) => r.body.includes(encodeURIComponent(email)) && !r.body.includes('sentinel'))).toBe(false);
  expect(smtp.messages.some((m) => m.envelope.to.includes(email))).toBe(false);
}

describe('--cors without --public-url: the page of the service is the Host, over http', () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await start(['--cors', 'https://app.example']);
  });

  it('Host forms.example:80 and Origin http://forms.example (a default port written out): accepted', async () => {
    const answer = await subscribe(service, 'port80@example.test', { host: 'forms.example:80', origin: 'http://forms.example' });
    expect(answer.status, answer.body).toBe(200);
    await mailTo('port80@example.test');
  });

  it('Host FORMS.example and Origin http://forms.example (case): accepted', async () => {
    const answer = await subscribe(service, 'case@example.test', { host: 'FORMS.example', origin: 'http://forms.example' });
    expect(answer.status, answer.body).toBe(200);
    await mailTo('case@example.test');
  });

  it('an https:// Origin for the http Host: refused, nothing runs', async () => {
    await expectRefused(service, 'scheme@example.test', { host: 'forms.example', origin: 'https://forms.example' });
  });

  it('another port than the Host: refused, nothing runs', async () => {
    await expectRefused(service, 'port@example.test', { host: 'forms.example', origin: 'http://forms.example:8080' });
  });
});

describe('--public-url https://forms.example', () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await start(['--cors', 'https://app.example', '--public-url', 'https://forms.example']);
  });

  it('a DNS-rebinding page (Origin and Host both rebound.example): refused, nothing runs', async () => {
    const port = new URL(service.url).port;
    await expectRefused(service, 'rebound@example.test', { host: `rebound.example:${port}`, origin: `http://rebound.example:${port}` });
  });

  it('http://forms.example, the public host with the wrong scheme: refused', async () => {
    await expectRefused(service, 'http@example.test', { host: 'forms.example', origin: 'http://forms.example' });
  });

  it('a page of the public URL, through a proxy that sends its own Host: accepted', async () => {
    const answer = await subscribe(service, 'proxied@example.test', { host: '10.0.0.5:8080', origin: 'https://forms.example' });
    expect(answer.status, answer.body).toBe(200);
    await mailTo('proxied@example.test');
  });

  it('${base-url} in the mail is the public URL, not a hostile Host header', async () => {
    const answer = await subscribe(service, 'hostile@example.test', { host: 'evil.example' });
    expect(answer.status).toBe(200);
    const text = await mailTo('hostile@example.test');
    expect(text).toContain('Confirm: https://forms.example/confirm?email=hostile@example.test');
    expect(text).not.toContain('evil.example');
  });

  it('does not warn about ${base-url} at start', () => {
    expect(service.stderr()).not.toContain('base-url-from-host');
  });
});

describe('${base-url} and --public-url', () => {
  it('without --public-url, ${base-url} follows the Host header, and serve warns at start', async () => {
    const service = await start([]);
    expect(service.stderr()).toContain('base-url-from-host');
    expect(service.stderr()).toContain('Serve it with --public-url');
    expect((await subscribe(service, 'follows@example.test', { host: 'evil.example' })).status).toBe(200);
    expect(await mailTo('follows@example.test')).toContain('Confirm: http://evil.example/confirm?email=follows@example.test');
  });

  it('with a path and --base-path, ${base-url} is both, one slash apart', async () => {
    const service = await start(['--public-url', 'https://example.org/forms/', '--base-path', '/app']);
    expect((await subscribe(service, 'path@example.test', { host: 'evil.example' }, '/app/subscribe')).status).toBe(200);
    expect(await mailTo('path@example.test')).toContain('Confirm: https://example.org/forms/app/confirm?email=path@example.test');
  });

  it.each([
    'forms.example',
    'ftp://forms.example',
    'https://forms.example/?a=1',
    'https://forms.example/#top',
    'https://user:pw@forms.example',
    'https://forms.example/?',
    'not a url',
  ])('--public-url %s: refused at start with one line, exit 2', async (value) => {
    const result = await run(['serve', FIXTURE, '--port', '0', '--smtp-url', smtp.url, '--public-url', value], { env: { PEER: peer.origin } });
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('--public-url');
    expect(result.stderr).toContain('expected the absolute http:// or https:// URL');
  });

  it('validate warns that the file should be served with --public-url', async () => {
    const result = await run(['validate', FIXTURE]);
    expect(result.stdout).toContain('base-url-from-host');
    expect(result.stdout).toContain('Serve it with --public-url');
  });
});
