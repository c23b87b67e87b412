// HEAD on /_health and /_metrics, as load balancers and probes send it: the GET answer without
// its body. Endpoints keep refusing HEAD, since answering one would run its tasks.
import { connect } from 'node:net';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';
import { fixture, startServe, writeAndWaitUntilRead, type RunningService } from '../helpers/serve.js';

let service: RunningService;
let peer: HttpPeer;
let smtp: SmtpPeer;

beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/crm', { status: 201, body: 'created' });
  smtp = await SmtpPeer.start();
  service = await startServe(fixture('tasks'), ['--smtp-url', smtp.url], { PEER: peer.origin });
});
afterAll(async () => {
  await service?.stop();
  await peer?.close();
  await smtp?.close();
});

interface Head {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bodyBytes: number;
}

/** A HEAD (or `method`) with node:http, counting the body bytes that arrive. */
function send(method: string, path: string): Promise<Head> {
  return new Promise((resolve, reject) => {
    const req = request(`${service.url}${path}`, { method, agent: false }, (response) => {
      let bodyBytes = 0;
      response.on('data', (chunk: Buffer) => (bodyBytes += chunk.length));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, bodyBytes }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HEAD on the probes', () => {
  it('answers HEAD /_health like GET, without a body', async () => {
    const get = await fetch(`${service.url}/_health`);
    const getBody = await get.text();
    const head = await send('HEAD', '/_health');
    expect(head.status).toBe(200);
    expect(head.bodyBytes).toBe(0);
    expect(head.headers['content-type']).toBe('application/json');
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(getBody)));
    expect(head.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const line = await service.waitForLog((l) => l.msg === 'request' && l.requestId === head.headers['x-request-id']);
    expect(line).toMatchObject({ method: 'HEAD', path: '/_health', status: 200 });
    expect(line.aborted).toBeUndefined();
  });

  it('answers HEAD /_metrics like GET, without a body', async () => {
    const head = await send('HEAD', '/_metrics');
    expect(head.status).toBe(200);
    expect(head.bodyBytes).toBe(0);
    expect(head.headers['content-type']).toContain('text/plain');
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
  });

  for (const path of ['/_health', '/_metrics']) {
    it(`answers other methods on ${path} with 405 and Allow: GET, HEAD`, async () => {
      for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
        const response = await fetch(`${service.url}${path}`, { method });
        expect(response.status, method).toBe(405);
        expect(response.headers.get('allow'), method).toBe('GET, HEAD');
        expect(((await response.json()) as { detail: string }).detail).toBe('the method must be GET or HEAD');
      }
    });
  }

  it('still answers HEAD on an endpoint with 405, and runs none of its tasks', async () => {
    const head = await send('HEAD', '/signup?email=a%40example.test');
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe('GET, POST');
    // The same request with GET does run the task: the HEAD above did not.
    const get = await fetch(`${service.url}/signup?email=b%40example.test`);
    expect(get.status).toBe(200);
    await get.text();
    expect(peer.requestsTo('/crm').map((r) => r.body)).toEqual(['email=b%40example.test']);
  });
});

describe('HEAD /_health while shutting down', () => {
  it('answers 503 without a body', async () => {
    const stopping = await startServe(fixture('tasks'), ['--smtp-url', smtp.url], { PEER: peer.origin });
    try {
      const { port, hostname } = new URL(stopping.url);
      const socket = connect(Number(port), hostname);
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      // A request under way when the signal comes (its last line is sent after it).
      // Shutdown closes connections that have sent nothing yet: the server must have read these
      // first bytes for the connection to count as one with a request under way.
      await writeAndWaitUntilRead(stopping.url, socket, 'HEAD /_health HTTP/1.1\r\nHost: x\r\n');
      stopping.child.kill('SIGTERM');
      await stopping.waitForLog((l) => l.msg === 'shutting down');
      const answer = new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
        socket.on('close', () => resolve(text));
      });
      socket.write('\r\n');
      const text = await answer;
      expect(text).toMatch(/^HTTP\/1\.1 503 /);
      expect(text).toMatch(/\r\ncontent-type: application\/problem\+json\r\n/i);
      // Nothing after the head: a HEAD answer has no body.
      expect(text.endsWith('\r\n\r\n')).toBe(true);
      expect((await stopping.exited).code).toBe(0);
    } finally {
      await stopping.stop('SIGKILL');
    }
  });
});
