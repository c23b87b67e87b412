// Preparation refuses what sending would refuse, through the real binary with real peers: a
// header value node:http would not send, a recipient or Reply-To the mail task could not use, a
// subject with raw control characters, a mail body over its limit. Each endpoint of the fixture
// POSTs to the HTTP peer first; a refused request must get 400 naming the parameter, and neither
// peer may hear of it. A valid request through the same endpoint then shows that the peers were
// reachable and that only its own calls arrived.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dryRun } from '../dry-run/run.js';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';

let peer: HttpPeer;
let smtp: SmtpPeer;
let service: RunningService;

beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/first', { status: 201, body: 'recorded' });
  peer.route('/second', { status: 200, body: 'forwarded' });
  smtp = await SmtpPeer.start();
  service = await startServe(fixture('send-checks'), ['--smtp-url', smtp.url], { PEER: peer.origin });
});
afterAll(async () => {
  await service?.stop();
  await peer?.close();
  await smtp?.close();
});

type Pairs = readonly (readonly [string, string])[];

interface Problem {
  status: number;
  detail: string;
  errors?: { parameter: string; detail: string }[];
}

const post = (endpoint: string, pairs: Pairs) =>
  fetch(`${service.url}/${endpoint}`, { method: 'POST', body: new URLSearchParams(pairs.map(([k, v]) => [k, v])) });

interface Mark {
  readonly http: number;
  readonly recipients: number;
  readonly mails: number;
}
const mark = (): Mark => ({ http: peer.requests.length, recipients: smtp.recipientsTried.length, mails: smtp.messages.length });

async function expectRefused(response: Response, parameter: string, before: Mark): Promise<Problem> {
  expect(response.status).toBe(400);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  const problem = (await response.json()) as Problem;
  expect(problem.errors?.map((e) => e.parameter)).toEqual([parameter]);
  expect(peer.requests.slice(before.http).map((r) => `${r.method} ${r.path}`)).toEqual([]);
  expect(smtp.recipientsTried.length).toBe(before.recipients);
  expect(smtp.messages.length).toBe(before.mails);
  return problem;
}

/** A valid request through `endpoint` reaches the peers, and only its own calls arrive. */
async function expectPeersStillHear(endpoint: string, pairs: Pairs, paths: readonly string[], mails: number): Promise<void> {
  const before = mark();
  const response = await post(endpoint, pairs);
  expect(response.status, await response.clone().text()).toBe(200);
  if (mails > 0) await smtp.waitForMessages(before.mails + mails);
  expect(peer.requests.slice(before.http).map((r) => r.path)).toEqual(paths);
}

describe('a header value node:http would refuse is refused before the first task', () => {
  it('a value node:http sends (Latin-1 included): both POSTs are made, the header as expanded (the control)', async () => {
    const before = mark();
    const response = await post('header', [['token', 'abc é']]);
    expect(response.status).toBe(200);
    const calls = peer.requests.slice(before.http);
    expect(calls.map((r) => r.path)).toEqual(['/first', '/second']);
    expect(calls[1]!.headers['x-token']).toMatch(/^t-abc /);
  });

  it.each([
    ['NUL', 'a\u0000b'],
    ['DEL', 'a\u007fb'],
    ['VT', 'a\u000bb'],
    ['FF', 'a\u000cb'],
    ['U+2028 (line separator)', 'a\u2028b'],
    ['a character beyond Latin-1 (€)', 'a€b'],
  ])('%s in the value: 400 naming "token", and the POST that comes first is not made', async (_label, token) => {
    const before = mark();
    const problem = await expectRefused(await post('header', [['token', token]]), 'token', before);
    expect(problem.detail).toBe('parameter "token" contains a character that is not allowed in an HTTP header value');
    await expectPeersStillHear('header', [['token', 'fine']], ['/first', '/second'], 0);
  });
});

describe('a task URL the request makes unusable is refused before the first task', () => {
  it("a base URL that is the peer's: both POSTs are made (the control)", async () => {
    await expectPeersStillHear('target', [['base', peer.origin]], ['/first', '/second'], 0);
  });

  it.each([
    ['no URL at all', 'not a url'],
    ['a scheme the task cannot request', 'ftp://127.0.0.1:9'],
    ['a file: URL', 'file:///etc'],
  ])('%s: 400 naming "base", and the POST that comes first is not made', async (_label, base) => {
    const before = mark();
    const problem = await expectRefused(await post('target', [['base', base]]), 'base', before);
    expect(problem.detail).toMatch(/^parameter "base" makes the task URL (not a valid URL|one whose scheme is not http or https)$/);
    await expectPeersStillHear('target', [['base', peer.origin]], ['/first', '/second'], 0);
  });
});

describe('a request value in the host of a task URL', () => {
  it('a bare host name passes preparation (the control): the first POST is made, the second fails to connect', async () => {
    const before = mark();
    const response = await post('host', [['h', '127.0.0.1']]);
    // Nothing listens on port 80 here, as a rule: 502; whatever answers, it is no refusal of the value.
    expect(response.status).not.toBe(400);
    expect(peer.requests.slice(before.http).map((r) => r.path)).toEqual(['/first']);
  });

  it.each([['127.0.0.1:18001'], ['127.0.0.1:18001/y#'], ['127.0.0.1:18001@other']])(
    'h=%s, which makes no valid host once escaped: 400 naming "h", not 500, and the first POST is not made',
    async (h) => {
      const before = mark();
      const problem = await expectRefused(await post('host', [['h', h]]), 'h', before);
      expect(problem.detail).toBe('parameter "h" makes the task URL not a valid URL');
    },
  );
});

describe('a recipient, Reply-To or subject the mail task could not use is refused before the first task', () => {
  it('a single address: the POST is made and the mail delivered to it (the control)', async () => {
    const before = mark();
    const response = await post('mail', [
      ['to', 'ann@example.test'],
      ['reply', 'Bob <bob@example.test>'],
      ['topic', 'tab\there ü'],
    ]);
    expect(response.status).toBe(200);
    await smtp.waitForMessages(before.mails + 1);
    expect(peer.requests.slice(before.http).map((r) => r.path)).toEqual(['/first']);
    const mail = smtp.messages[before.mails]!;
    expect(mail.envelope.to).toEqual(['ann@example.test']);
    expect(mail.parsed.replyTo?.value).toEqual([{ address: 'bob@example.test', name: 'Bob' }]);
    expect(mail.parsed.subject).toBe('About tab\there ü');
  });

  it.each([
    ['to', 'sent twice (to=a&to=b)', ['ann@example.test', 'eve@example.test']],
    ['to', 'holding U+0085', ['ann@example.test\u0085']],
    ['to', 'holding NUL in the local part', ['an\u0000n@example.test']],
    ['to', 'holding a zero-width space', ['an\u200bn@example.test']],
    ['to', 'with a comment that would become a display name', ['ann@example.test (Evil Name)']],
    ['to', 'with a comment that holds another address', ['ann@example.test (eve@evil.test)']],
    ['to', 'with a display name that holds another address', ['"eve@evil.test" <ann@example.test>']],
    ['to', 'with a bare display name that holds another address', ['eve@evil.test <ann@example.test>']],
    ['to', 'with an encoded-word display name (decoded into another address)', ['=?utf-8?q?eve=40evil.test?= <ann@example.test>']],
    ['reply', 'with an encoded-word display name', ['=?utf-8?b?ZXZlQGV2aWwudGVzdA==?= <bob@example.test>']],
    ['reply', 'holding NUL', ['bob@example.test\u0000']],
    ['reply', 'with a comment', ['(Evil) bob@example.test']],
    ['topic', 'holding NUL', ['a\u0000b']],
    ['topic', 'holding VT', ['a\u000bb']],
    ['topic', 'holding FF', ['a\u000cb']],
    ['topic', 'holding DEL', ['a\u007fb']],
    ['topic', 'holding U+0085', ['a\u0085b']],
  ] as const)('%s %s: 400 naming it, no POST, no mail', async (parameter, _label, values) => {
    const before = mark();
    await expectRefused(
      await post(
        'mail',
        values.map((v) => [parameter, v] as const),
      ),
      parameter,
      before,
    );
    await expectPeersStillHear('mail', [['to', 'ann@example.test']], ['/first'], 1);
  });
});

describe('a mail body holds at most 1 MiB once expanded', () => {
  const LIMIT = 1024 * 1024;
  /** The body template is "From ${name}:\n${message}". */
  const room = LIMIT - Buffer.byteLength('From Ann:\n');

  it('a body of exactly 1 MiB is delivered whole', async () => {
    const before = mark();
    const response = await post('letter', [['message', 'x'.repeat(room)]]);
    expect(response.status).toBe(200);
    await smtp.waitForMessages(before.mails + 1);
    expect(peer.requests.slice(before.http).map((r) => r.path)).toEqual(['/first']);
    expect(smtp.messages[before.mails]!.parsed.text?.replace(/\r?\n$/, '')).toBe(`From Ann:\n${'x'.repeat(room)}`);
  });

  it.each([
    ['one byte over it', 'x'.repeat(room + 1)],
    ['one byte over it in UTF-8, though not in characters (ü is two bytes)', 'ü'.repeat(room / 2) + 'x'],
    ['a 9 MB field', 'x'.repeat(9_000_000)],
  ])('%s: 400 naming "message", no POST, no mail', async (_label, message) => {
    const before = mark();
    const problem = await expectRefused(await post('letter', [['message', message]]), 'message', before);
    expect(problem.detail).toBe('parameter "message" makes the mail body larger than 1 MiB');
    await expectPeersStillHear('letter', [['message', 'short']], ['/first'], 1);
  });
});

describe('dry-run gives the same refusal, from the same preparation', () => {
  const DRY_ENV = { PEER: 'http://127.0.0.1:9' };
  it.each([
    ['header', 'token', 'a\u007fb'],
    ['target', 'base', 'ftp://127.0.0.1:9'],
    ['mail', 'to', 'ann@example.test (Evil Name)'],
    ['mail', 'topic', 'a\u000bb'],
  ])('%s with %s=%j: exit 1 with the detail serve gives, no request printed', async (endpoint, name, value) => {
    const answer = (await (await post(endpoint, [[name, value]])).json()) as Problem;
    expect(answer.status).toBe(400);
    const run = await dryRun([fixture('send-checks'), '--endpoint', endpoint, '--param', `${name}=${value}`], DRY_ENV);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(`error: endpoint "${endpoint}": the request fails with status 400: ${answer.detail}\n`);
    expect(run.stdout).not.toMatch(/^\s+POST /m);
  });
});
