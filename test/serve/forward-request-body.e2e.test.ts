// <forward-request-body/> through the built binary: what a real peer on loopback receives is the
// request body byte for byte (compared by SHA-256) with the Content-Type the client sent, for
// bodies a parser would be tempted to normalise; an endpoint that forwards accepts any type,
// still binds a form's fields, and one that does not still answers 415.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

let service: RunningService;
let peer: HttpPeer;
let dir: string;
beforeAll(async () => {
  peer = await HttpPeer.start();
  for (const route of ['/relay', '/form', '/multipart', '/ping', '/later']) peer.route(route, { status: 200, body: 'ok' });
  dir = mkdtempSync(path.join(tmpdir(), 'forward-body-test-'));
  service = await startServe(fixture('raw-body'), ['--max-body-size', '8MiB', '--upload-dir', dir], { PEER: peer.origin });
});
afterAll(async () => {
  await service?.stop();
  await peer?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function relay(
  endpoint: string,
  body: Buffer | string,
  contentType: string | null,
): Promise<{ status: number; received: { bytes: Buffer; contentType: string | undefined; length: string | undefined } }> {
  const route = `/${endpoint === 'front' ? 'relay' : endpoint}`;
  const before = peer.requestsTo(route).length;
  const response = await fetch(`${service.url}/${endpoint}`, {
    method: 'POST',
    headers: contentType === null ? {} : { 'content-type': contentType },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  await response.arrayBuffer();
  await peer.waitForRequests(before + 1, route);
  const sent = peer.requestsTo(route)[before]!;
  return { status: response.status, received: { bytes: sent.bytes, contentType: sent.headers['content-type'], length: sent.headers['content-length'] } };
}

describe('<forward-request-body/> sends the body byte for byte, with its Content-Type', () => {
  const cases: [string, Buffer | string, string][] = [
    ['pretty-printed JSON', JSON.stringify({ action: 'opened', issue: { number: 1, labels: [{ name: 'bug' }] } }, null, 2), 'application/json'],
    ['non-ASCII UTF-8 JSON with a charset parameter', '{"text": "Grüße, 日本語, emoji 🎉", "escaped": "\\u00fc"}', 'application/json; charset=utf-8'],
    ['JSON with a trailing newline and a byte order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a": 1}\n')]), 'application/json'],
    ['a form, its order and encoding kept', 'b=2&a=1&name=Ann+Lee&x=%C3%BC%20', 'application/x-www-form-urlencoded'],
    ['text/plain in Latin-1', Buffer.from('caf\xe9 cr\xe8me\r\n', 'latin1'), 'text/plain; charset=ISO-8859-1'],
    ['arbitrary bytes as application/octet-stream', randomBytes(4096), 'application/octet-stream'],
    ['an XML body, never parsed', '<?xml version="1.0"?>\n<event  type="a" >\n  <x/>\n</event>\n', 'application/xml; charset="utf-8"'],
  ];
  for (const [name, body, type] of cases) {
    it(name, async () => {
      const { status, received } = await relay('relay', body, type);
      expect(status).toBe(200);
      expect(sha256(received.bytes)).toBe(sha256(body));
      expect(received.contentType).toBe(type);
    });
  }

  it('a large body, spooled to a temporary file, arrives whole with its length declared', async () => {
    const body = randomBytes(3 * 1024 * 1024);
    const { status, received } = await relay('relay', body, 'application/octet-stream');
    expect(status).toBe(200);
    expect(received.bytes.length).toBe(body.length);
    expect(sha256(received.bytes)).toBe(sha256(body));
    expect(received.length).toBe(String(body.length));
  });

  it('a large JSON body arrives whole', async () => {
    const body = JSON.stringify({ items: Array.from({ length: 20_000 }, (_, i) => ({ i, text: `ü ${i}` })) }, null, 4) + '\n';
    const { received } = await relay('relay', body, 'application/json');
    expect(sha256(received.bytes)).toBe(sha256(body));
  });

  it('binds a form field and relays the form as it came', async () => {
    const body = 'name=Ann%20Lee&extra=1';
    const response = await fetch(`${service.url}/form`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    expect(await response.text()).toBe('hello Ann Lee');
    const sent = peer.requestsTo('/form').at(-1)!;
    expect(sent.body).toBe(body);
    expect(sent.headers['x-name']).toBe('Ann Lee');
  });

  it('binds a multipart field and relays the multipart body, boundaries and all', async () => {
    const form = new FormData();
    form.set('name', 'Ada');
    form.set('file', new Blob([new Uint8Array(randomBytes(100_000))]), 'data.bin');
    const request = new Request(`${service.url}/multipart`, { method: 'POST', body: form });
    const type = request.headers.get('content-type')!;
    const bytes = Buffer.from(await request.arrayBuffer());
    const response = await fetch(`${service.url}/multipart`, { method: 'POST', headers: { 'content-type': type }, body: new Uint8Array(bytes) });
    expect(await response.text()).toBe('hello Ada');
    const sent = peer.requestsTo('/multipart').at(-1)!;
    expect(sha256(sent.bytes)).toBe(sha256(bytes));
    expect(sent.headers['content-type']).toBe(type);
  });

  it('reaches the task of a forward target', async () => {
    const body = '{"via": "front"}\n';
    const { status, received } = await relay('front', body, 'application/json; charset=utf-8');
    expect(status).toBe(200);
    expect(received.bytes.toString()).toBe(body);
    expect(received.contentType).toBe('application/json; charset=utf-8');
  });

  it('a background task sends it after the answer', async () => {
    const body = randomBytes(200_000);
    const { status, received } = await relay('later', body, 'application/octet-stream');
    expect(status).toBe(200);
    expect(sha256(received.bytes)).toBe(sha256(body));
  });

  it('leaves no temporary file behind once the tasks are done', async () => {
    await relay('relay', randomBytes(1024 * 1024), 'application/octet-stream');
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let i = 0; i < 100 && readdirSync(dir).flatMap((f) => readdirSync(path.join(dir, f))).length > 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(readdirSync(dir).flatMap((f) => readdirSync(path.join(dir, f)))).toEqual([]);
  });
});

describe('content types', () => {
  it('an endpoint without a task that forwards the body still refuses a type it cannot read (415)', async () => {
    const before = peer.requestsTo('/ping').length;
    const response = await fetch(`${service.url}/plain`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' });
    expect(response.status).toBe(415);
    expect(peer.requestsTo('/ping')).toHaveLength(before);
  });

  it('a body without a Content-Type is relayed without one', async () => {
    const { status, received } = await relay('relay', Buffer.from('no type'), null);
    expect(status).toBe(200);
    expect(received.bytes.toString()).toBe('no type');
    expect(received.contentType).toBeUndefined();
  });

  it('a request without a body forwards an empty one, without a type', async () => {
    const before = peer.requestsTo('/relay').length;
    const response = await fetch(`${service.url}/relay`, { method: 'POST' });
    expect(response.status).toBe(200);
    await peer.waitForRequests(before + 1, '/relay');
    const sent = peer.requestsTo('/relay')[before]!;
    expect(sent.bytes.length).toBe(0);
    expect(sent.headers['content-type']).toBeUndefined();
  });

  it('malformed JSON is still a 400 and nothing is relayed', async () => {
    const before = peer.requestsTo('/relay').length;
    const response = await fetch(`${service.url}/relay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a": ' });
    expect(response.status).toBe(400);
    expect(peer.requestsTo('/relay')).toHaveLength(before);
  });
});
