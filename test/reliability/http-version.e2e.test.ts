// HTTP versions other than 1.0 and 1.1 (SECURITY.md, "Malformed and hostile requests"). node's
// parser (llhttp) refuses most unknown versions itself (`HTTP/1.2`, `HTTP/9.9`: a clientError),
// but hands `HTTP/2.0`, `HTTP/0.9` and a request line without a version (read as HTTP/0.9) to
// the server as requests: those must be refused by the service, before anything runs, with the
// same problem+json 400 and a closed connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type RunningService } from '../helpers/serve.js';
import { RELIABILITY_FIXTURES, head, rawRequest } from './raw.js';

let service: RunningService;

beforeAll(async () => {
  service = await startServe(`${RELIABILITY_FIXTURES}web/endpoints.xml`, [], { PEER: 'http://127.0.0.1:9' });
});
afterAll(async () => {
  await service?.stop();
});

describe('a request line whose HTTP version is not 1.0 or 1.1', () => {
  it.each([
    ['HTTP/2.0', 'GET /echo?name=x HTTP/2.0'],
    ['HTTP/0.9', 'GET /echo?name=x HTTP/0.9'],
    ['no version at all', 'GET /echo?name=x'],
    ['HTTP/1.2 (refused by the parser)', 'GET /echo?name=x HTTP/1.2'],
    ['HTTP/3.0 (refused by the parser)', 'GET /echo?name=x HTTP/3.0'],
    ['HTTP/2.0 to /_health', 'GET /_health HTTP/2.0'],
  ])('%s: 400 problem+json, the endpoint does not run, the connection is closed', async (_name, line) => {
    const answer = await rawRequest(service.url, head(line));
    expect(answer.hung).toBe(false);
    expect(answer.status, answer.text.slice(0, 300)).toBe(400);
    expect(answer.text.toLowerCase()).toContain('content-type: application/problem+json');
    expect(answer.text).toMatch(/x-request-id: [0-9a-f-]{36}/i);
    const problem = JSON.parse(answer.body) as { status: number; detail: string };
    expect(problem.status).toBe(400);
    expect(problem.detail).toMatch(/HTTP/);
    expect(answer.text).not.toContain('hello x');
    expect(answer.text).not.toContain('"ok"');
    expect(answer.closedByServer).toBe(true);
  });

  it.each(['HTTP/1.0', 'HTTP/1.1'])('%s is served', async (version) => {
    const answer = await rawRequest(service.url, head(`GET /echo?name=x ${version}`));
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('hello x');
  });
});

describe('a request with more than one Host header (RFC 9112, 3.2)', () => {
  it.each([
    ['to an endpoint', 'GET /echo?name=x HTTP/1.1', { Host: 'evil.example' }],
    ['in another case', 'GET /echo?name=x HTTP/1.1', { HOST: '127.0.0.1' }],
    ['to /_health', 'GET /_health HTTP/1.1', { host: 'other' }],
  ])('%s: 400 problem+json, the endpoint does not run, the connection is closed', async (_name, line, headers) => {
    const answer = await rawRequest(service.url, head(line, headers));
    expect(answer.status, answer.text.slice(0, 300)).toBe(400);
    expect((JSON.parse(answer.body) as { detail: string }).detail).toBe('the request has more than one Host header');
    expect(answer.text).not.toContain('hello x');
    expect(answer.closedByServer).toBe(true);
  });

  it('one Host header is served', async () => {
    const answer = await rawRequest(service.url, head('GET /echo?name=x HTTP/1.1'));
    expect(answer.body).toBe('hello x');
  });
});
