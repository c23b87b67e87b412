// Limits and bad input: each is answered, and none affects the next request.
import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

let service: RunningService;
let upstream: HttpPeer;

beforeAll(async () => {
  upstream = await HttpPeer.start();
  upstream.route('/never', { never: true });
  service = await startServe(fixture('basic'), ['--max-body-size', '2048', '--request-timeout', '300ms']);
});
afterAll(async () => {
  await service?.stop();
  await upstream?.close();
});

async function detailOf(response: Response): Promise<string> {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return ((await response.json()) as { detail: string }).detail;
}

async function stillServes(): Promise<void> {
  const response = await fetch(`${service.url}/echo?name=after`);
  expect(response.status).toBe(200);
}

/**
 * A POST through node:http on a connection of its own, so the body can be chunked (or fall
 * short of its declared length) and the answer read while the body is still being sent.
 */
function post(
  path: string,
  headers: Record<string, string>,
  chunks: readonly Buffer[],
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${service.url}${path}`, { method: 'POST', headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    let i = 0;
    const next = () => {
      if (i >= chunks.length) return void req.end();
      if (req.destroyed) return;
      req.write(chunks[i++]!, () => setImmediate(next));
    };
    next();
  });
}

describe('body size', () => {
  it('answers a declared oversized body with 413 without reading it', async () => {
    const response = await post('/echo?name=x', { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(1024 * 1024) }, [
      Buffer.alloc(1024, 'a'),
    ]);
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body).detail).toContain('2048 bytes');
    await stillServes();
  });

  it('answers Expect: 100-continue with 413 before the body when it declares too much', async () => {
    const { port, hostname } = new URL(service.url);
    const socket = connect(Number(port), hostname);
    socket.write('POST /echo?name=x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n');
    const first = await new Promise<string>((resolve) => socket.once('data', (d: Buffer) => resolve(d.toString())));
    socket.destroy();
    expect(first).toMatch(/^HTTP\/1\.1 413 /);
    await stillServes();
  });

  it('answers Expect: 100-continue with 100 when the body fits', async () => {
    const { port, hostname } = new URL(service.url);
    const socket = connect(Number(port), hostname);
    socket.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 12\r\nExpect: 100-continue\r\n\r\n');
    const first = await new Promise<string>((resolve) => socket.once('data', (d: Buffer) => resolve(d.toString())));
    expect(first).toMatch(/^HTTP\/1\.1 100 Continue/);
    socket.write('{"name":"c"}');
    const rest = await new Promise<string>((resolve) => {
      let text = first;
      socket.on('data', (d: Buffer) => {
        text += d.toString();
        if (text.includes('"lang"')) resolve(text);
      });
    });
    socket.destroy();
    expect(rest).toMatch(/HTTP\/1\.1 200 OK/);
    expect(rest).toContain('"name":"c"');
  });

  it('answers an oversized chunked body with 413', async () => {
    const chunk = Buffer.alloc(1024, 'a');
    const response = await post('/echo?name=x', { 'content-type': 'application/json' }, [chunk, chunk, chunk, chunk]);
    expect(response.status).toBe(413);
    await stillServes();
  });

  it('answers an oversized multipart upload with 413', async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(4096, 'z')]), 'big.bin');
    const response = await fetch(`${service.url}/echo?name=x`, { method: 'POST', body: form });
    expect(response.status).toBe(413);
    await stillServes();
  });

  it('accepts a body at the limit', async () => {
    const value = 'v'.repeat(2048 - 'name='.length);
    const response = await fetch(`${service.url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `name=${value}`,
    });
    expect(response.status).toBe(200);
  });
});

describe('uploads', () => {
  it('answers more than 20 files with 413, 20 are fine', async () => {
    const roomy = await startServe(fixture('basic'));
    try {
      const many = (n: number) => {
        const form = new FormData();
        for (let i = 0; i < n; i++) form.append(`f${i}`, new Blob(['x']), `f${i}.txt`);
        return form;
      };
      const ok = await fetch(`${roomy.url}/echo?name=x`, { method: 'POST', body: many(20) });
      expect(ok.status).toBe(200);
      const refused = await fetch(`${roomy.url}/echo?name=x`, { method: 'POST', body: many(21) });
      expect(refused.status).toBe(413);
      expect(await detailOf(refused)).toContain('20');
    } finally {
      await roomy.stop();
    }
  });
});

describe('time limits', () => {
  it('answers 503 when the request takes longer than --request-timeout, and keeps serving', async () => {
    const response = await fetch(`${service.url}/proxy?upstream=${encodeURIComponent(upstream.url('/never'))}`);
    expect(response.status).toBe(503);
    expect(await detailOf(response)).toContain('300ms');
    await stillServes();
  });

  it('closes a connection whose headers do not arrive within 10 s', async () => {
    const { port, hostname } = new URL(service.url);
    const socket = connect(Number(port), hostname);
    socket.write('GET /echo?name=x HTTP/1.1\r\nHost: x\r\n');
    const received: Buffer[] = [];
    socket.on('data', (d: Buffer) => received.push(d));
    await new Promise<void>((resolve) => socket.on('close', () => resolve()));
    // No complete answer to the request: at most node's bare timeout status line.
    expect(Buffer.concat(received).toString()).not.toContain('200 OK');
    await stillServes();
  }, 25_000);
});

describe('bad requests', () => {
  it('answers garbage on the wire with a 400 and keeps serving', async () => {
    const { port, hostname } = new URL(service.url);
    const socket = connect(Number(port), hostname);
    socket.write('THIS IS NOT HTTP\r\n\r\n');
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('close', () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(answer).toMatch(/x-request-id: [0-9a-f-]{36}/);
    await stillServes();
  });

  it('survives a client that leaves in the middle of a body', async () => {
    const { port, hostname } = new URL(service.url);
    const socket = connect(Number(port), hostname);
    socket.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":');
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    await stillServes();
  });
});
