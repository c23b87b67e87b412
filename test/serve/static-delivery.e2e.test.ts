// Static files through the real binary, as the request log reports them: a file the client
// read in full is never logged aborted, one the client walked away from is.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type RunningService } from '../helpers/serve.js';

const SMALL = 'hello from static\n';
const MEDIUM_BYTES = 300 * 1024;
/** More than loopback socket buffers hold, so that a client that stops reading leaves most unsent. */
const LARGE_BYTES = 32 * 1024 * 1024;

let dir: string;
let service: RunningService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'endpoint-service-static-'));
  mkdirSync(join(dir, 'static'));
  writeFileSync(join(dir, 'static', 'small.txt'), SMALL);
  writeFileSync(join(dir, 'static', 'empty.txt'), '');
  writeFileSync(join(dir, 'static', 'medium.txt'), Buffer.alloc(MEDIUM_BYTES, 'm'));
  writeFileSync(join(dir, 'static', 'large.txt'), Buffer.alloc(LARGE_BYTES, 'l'));
  writeFileSync(
    join(dir, 'endpoints.xml'),
    `<?xml version="1.0" encoding="UTF-8"?>
<endpoint-folder>
  <endpoint name="small"><success><response-from-static filename="small.txt"/></success></endpoint>
  <endpoint name="empty-file"><success><response-from-static filename="empty.txt"/></success></endpoint>
  <endpoint name="medium"><success><response-from-static filename="medium.txt"/></success></endpoint>
  <endpoint name="large"><success><response-from-static filename="large.txt"/></success></endpoint>
</endpoint-folder>
`,
  );
  service = await startServe(join(dir, 'endpoints.xml'));
});
afterAll(async () => {
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** GET `path`, read the whole body; `connection: close` makes the client hang up right after it. */
function readAll(path: string, agent: Agent): Promise<{ status: number; bytes: number; length: string | undefined; requestId: string }> {
  return new Promise((resolve, reject) => {
    get(`${service.url}${path}`, { agent, headers: { connection: 'close' } }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, bytes, length: response.headers['content-length'], requestId: String(response.headers['x-request-id']) }),
      );
      response.on('error', reject);
    }).on('error', reject);
  });
}

function requestLine(requestId: string): Promise<Record<string, unknown>> {
  return service.waitForLog((l) => l.msg === 'request' && l.requestId === requestId);
}

describe('the request log of static files', () => {
  it('never logs a static file the client read in full as aborted', async () => {
    // Many short connections at once: each client closes as soon as it has the Content-Length.
    const agent = new Agent({ keepAlive: false, maxSockets: 8 });
    const paths = Array.from({ length: 320 }, (_, i) => (i % 16 === 0 ? '/medium' : i % 16 === 1 ? '/empty-file' : '/small'));
    const answers = await Promise.all(paths.map((path) => readAll(path, agent)));
    agent.destroy();

    for (const [i, answer] of answers.entries()) {
      const expected = paths[i] === '/medium' ? MEDIUM_BYTES : paths[i] === '/empty-file' ? 0 : SMALL.length;
      expect(answer.status).toBe(200);
      expect(answer.bytes).toBe(expected);
      expect(answer.length).toBe(String(expected));
    }
    const lines = await Promise.all(answers.map((a) => requestLine(a.requestId)));
    expect(lines.filter((l) => l.aborted === true).map((l) => l.path)).toEqual([]);
    expect(lines.every((l) => l.status === 200)).toBe(true);
  });

  it('logs a client that disconnects part-way through a large static file as aborted', async () => {
    const { hostname, port } = new URL(service.url);
    const requestId = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(`GET /large HTTP/1.1\r\nhost: ${hostname}:${port}\r\n\r\n`));
      let head = '';
      socket.on('data', (chunk: Buffer) => {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        // The head and the first bytes of the body are here: stop reading and hang up.
        socket.destroy();
        const id = /\r\nx-request-id: ([0-9a-f-]{36})\r\n/i.exec(head);
        if (id === null) reject(new Error(`no x-request-id in ${head.slice(0, 300)}`));
        else resolve(id[1]!);
      });
      socket.on('error', reject);
    });
    const line = await requestLine(requestId);
    expect(line).toMatchObject({ path: '/large', status: 200, aborted: true });
  });
});
