// Hash authentication with a security.xml.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

const SECRET = 'env-secret-value-7f3a';
let service: RunningService;
let peer: HttpPeer;

beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/notify', { status: 200, body: 'ok' });
  service = await startServe(fixture('auth'), [], { PEER: peer.origin, ORDER_SECRET: SECRET });
});
afterAll(async () => {
  await service?.stop();
  await peer?.close();
});

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

async function expect401(response: Response): Promise<void> {
  expect(response.status).toBe(401);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  const body = (await response.json()) as { title: string; requestId: string };
  expect(body.title).toBe('Unauthorized');
  expect(body.requestId).toBe(response.headers.get('x-request-id'));
}

describe('hash authentication', () => {
  it('accepts the hash of name, included values (a default counts), environment and key', async () => {
    const hash = sha256(`order` + `book` + `1` + `live` + SECRET);
    const response = await fetch(`${service.url}/order?item=book&hash=${hash}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ordered 1 book');
  });

  it('accepts uppercase hex and any of the keys', async () => {
    const hash = sha256(`order` + `pen` + `3` + `preview` + 'literal-old-key').toUpperCase();
    const response = await fetch(`${service.url}/order?item=pen&qty=3&environment=preview&hash=${hash}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ordered 3 pen');
  });

  it('does not cover parameters outside include-in-hash', async () => {
    const hash = sha256(`order` + `book` + `1` + `live` + SECRET);
    const response = await fetch(`${service.url}/order?item=book&note=anything&hash=${hash}`);
    expect(response.status).toBe(200);
  });

  it('refuses a missing hash with 401, without the error action and without running tasks', async () => {
    const before = peer.requestsTo('/notify').length;
    await expect401(await fetch(`${service.url}/order?item=book`));
    await expect401(await fetch(`${service.url}/plain`));
    // A later, authenticated request runs its task: if the refused one had, there would be two.
    const hash = sha256(`order` + `lamp` + `1` + `live` + SECRET);
    expect((await fetch(`${service.url}/order?item=lamp&hash=${hash}`)).status).toBe(200);
    expect(peer.requestsTo('/notify').length).toBe(before + 1);
  });

  it('refuses a hash over other values, another environment or another key', async () => {
    const wrong = [
      sha256(`order` + `book` + `2` + `live` + SECRET),
      sha256(`order` + `book` + `1` + `preview` + SECRET),
      sha256(`order` + `book` + `1` + `live` + 'not-a-key'),
      'zz',
    ];
    for (const hash of wrong) await expect401(await fetch(`${service.url}/order?item=book&hash=${hash}`));
  });

  it('refuses a hash sent twice', async () => {
    const hash = sha256(`order` + `book` + `1` + `live` + SECRET);
    await expect401(await fetch(`${service.url}/order?item=book&hash=${hash}&hash=${hash}`));
  });

  it('checks the endpoint asked for, not the forward target', async () => {
    const hash = sha256(`via` + `live` + SECRET);
    const response = await fetch(`${service.url}/via?item=cup&hash=${hash}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ordered 1 cup');
  });

  it('never logs the hash or the secret', async () => {
    const hash = sha256(`plain` + `live` + SECRET);
    const response = await fetch(`${service.url}/plain?hash=${hash}`);
    expect(response.status).toBe(200);
    const id = response.headers.get('x-request-id');
    await service.waitForLog((l) => l.requestId === id && l.msg === 'request');
    expect(service.stderr()).not.toContain(hash);
    expect(service.stderr()).not.toContain(SECRET);
  });
});
