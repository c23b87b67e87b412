import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskError } from '../../src/tasks/errors.js';
import { createHttpClient, describeTarget, MAX_RESPONSE_BYTES, sendHttpRequest } from '../../src/tasks/http-request/send.js';
import type { PreparedHttpRequest } from '../../src/tasks/http-request/types.js';
import { backoffMs, parseRetryAfter } from '../../src/tasks/retry.js';
import { HttpPeer } from '../helpers/http-peer.js';
import { closedPort } from '../helpers/smtp-peer.js';

let peer: HttpPeer;
const client = createHttpClient();

beforeAll(async () => {
  peer = await HttpPeer.start();
});
afterAll(async () => {
  await peer.close();
});

function get(path: string, extra: Partial<PreparedHttpRequest> = {}): PreparedHttpRequest {
  return { method: 'GET', url: peer.url(path), headers: {}, body: null, secretHeaders: [], signing: null, ...extra };
}

async function failure(promise: Promise<unknown>): Promise<TaskError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TaskError);
    return error as TaskError;
  }
  throw new Error('expected the request to fail');
}

describe('sendHttpRequest', () => {
  it('sends method, headers and body as prepared and returns a 2xx answer', async () => {
    peer.route('/echo', { status: 201, json: { ok: true } });
    const answer = await sendHttpRequest(
      client,
      get('/echo?x=1', { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k1' }, body: '{"a":"b"}' }),
      { timeoutMs: 5_000, retries: 0 },
    );
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body.toString())).toEqual({ ok: true });
    expect(answer.attempts).toBe(1);
    const seen = peer.requestsTo('/echo').at(-1)!;
    expect(seen.method).toBe('POST');
    expect(seen.query.get('x')).toBe('1');
    expect(seen.headers['x-api-key']).toBe('k1');
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.body).toBe('{"a":"b"}');
  });

  it('reads an empty answer to HEAD and a 204', async () => {
    peer.route('/head', { status: 200, headers: { 'x-total': '5' } });
    const head = await sendHttpRequest(client, get('/head', { method: 'HEAD' }), { timeoutMs: 5_000, retries: 0 });
    expect(head.headers['x-total']).toBe('5');
    expect(head.body.length).toBe(0);
    peer.route('/nothing', { status: 204 });
    const none = await sendHttpRequest(client, get('/nothing', { method: 'DELETE' }), { timeoutMs: 5_000, retries: 0 });
    expect(none.status).toBe(204);
    expect(peer.requestsTo('/nothing').at(-1)!.method).toBe('DELETE');
  });

  it('retries a 503 and succeeds on the following 200', async () => {
    peer.route('/flaky', { status: 503, body: 'busy' }, { status: 200, body: 'fine' });
    const answer = await sendHttpRequest(client, get('/flaky'), { timeoutMs: 5_000, retries: 2 });
    expect(answer.body.toString()).toBe('fine');
    expect(answer.attempts).toBe(2);
    expect(peer.requestsTo('/flaky')).toHaveLength(2);
  });

  it('gives up after the configured retries and reports every attempt', async () => {
    peer.route('/down', { status: 500 });
    const error = await failure(sendHttpRequest(client, get('/down'), { timeoutMs: 5_000, retries: 2 }));
    expect(error.attempts).toBe(3);
    expect(error.message).toContain('answered 500');
    expect(peer.requestsTo('/down')).toHaveLength(3);
  });

  it('does not retry a 4xx other than 429', async () => {
    peer.route('/missing', { status: 404 });
    const error = await failure(sendHttpRequest(client, get('/missing'), { timeoutMs: 5_000, retries: 3 }));
    expect(error.attempts).toBe(1);
    expect(error.message).toContain('answered 404');
    expect(peer.requestsTo('/missing')).toHaveLength(1);
  });

  it('retries a 429 after the Retry-After the server asks for', async () => {
    peer.route('/limited', { status: 429, headers: { 'retry-after': '1' } }, { status: 200, body: 'ok' });
    const answer = await sendHttpRequest(client, get('/limited'), { timeoutMs: 5_000, retries: 1 });
    expect(answer.attempts).toBe(2);
    const [first, second] = peer.requestsTo('/limited');
    // The second attempt cannot come before the server's one second is over.
    expect(second!.startedAt - first!.endedAt!).toBeGreaterThanOrEqual(990);
  });

  it('does not retry when Retry-After asks for more than 5 s', async () => {
    peer.route('/later', { status: 503, headers: { 'retry-after': '120' } }, { status: 200 });
    const error = await failure(sendHttpRequest(client, get('/later'), { timeoutMs: 5_000, retries: 3 }));
    expect(error.attempts).toBe(1);
    expect(error.message).toContain('Retry-After asks for 120 s');
    expect(peer.requestsTo('/later')).toHaveLength(1);
  });

  it('fails an attempt that gets no answer within the timeout, and retries it', async () => {
    peer.route('/silent', { never: true });
    const error = await failure(sendHttpRequest(client, get('/silent'), { timeoutMs: 300, retries: 1 }));
    expect(error.message).toContain('no complete answer within 300 ms');
    expect(error.attempts).toBe(2);
    expect(peer.requestsTo('/silent')).toHaveLength(2);
  });

  it('retries a refused connection and then fails with the network error', async () => {
    const port = await closedPort();
    const error = await failure(
      sendHttpRequest(
        client,
        { method: 'GET', url: `http://127.0.0.1:${port}/x`, headers: {}, body: null, secretHeaders: [], signing: null },
        { timeoutMs: 2_000, retries: 1 },
      ),
    );
    expect(error.attempts).toBe(2);
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('stops reading an answer larger than 10 MiB', async () => {
    peer.route('/huge', { streamBytes: MAX_RESPONSE_BYTES + 1024 * 1024 });
    const error = await failure(sendHttpRequest(client, get('/huge'), { timeoutMs: 10_000, retries: 2 }));
    expect(error.message).toContain('larger than 10 MiB');
    // Not a transient failure: asking again would only read another 10 MiB.
    expect(error.attempts).toBe(1);
  });

  it('accepts an answer of exactly 10 MiB', async () => {
    peer.route('/big', { streamBytes: MAX_RESPONSE_BYTES });
    const answer = await sendHttpRequest(client, get('/big'), { timeoutMs: 10_000, retries: 0 });
    expect(answer.body.length).toBe(MAX_RESPONSE_BYTES);
  });

  it('follows five redirects and fails on the sixth', async () => {
    for (let i = 1; i <= 6; i++) peer.route(`/hop${i}`, { status: 302, headers: { location: `/hop${i + 1}` } });
    peer.route('/hop7', { status: 200, body: 'arrived' });
    const five = await sendHttpRequest(client, get('/hop2'), { timeoutMs: 5_000, retries: 0 });
    expect(five.body.toString()).toBe('arrived');
    const error = await failure(sendHttpRequest(client, get('/hop1'), { timeoutMs: 5_000, retries: 0 }));
    expect(error.message).toContain('more than 5 redirects');
  });

  it('fails a redirect loop without retrying it', async () => {
    peer.route('/loop', { status: 301, headers: { location: '/loop' } });
    const before = peer.requestsTo('/loop').length;
    const error = await failure(sendHttpRequest(client, get('/loop'), { timeoutMs: 5_000, retries: 2 }));
    expect(error.message).toContain('more than 5 redirects');
    expect(error.attempts).toBe(1);
    expect(peer.requestsTo('/loop').length - before).toBe(6);
  });

  it('keeps query strings and credentials out of error messages', async () => {
    peer.route('/secret', { status: 403 });
    const error = await failure(
      sendHttpRequest(client, get('/secret?api_key=TOPSECRET', { headers: { authorization: 'Bearer HIDDEN' } }), { timeoutMs: 5_000, retries: 0 }),
    );
    expect(error.message).toBe(`GET ${peer.origin}/secret answered 403 Forbidden`);
    expect(describeTarget({ method: 'GET', url: 'https://user:pw@h.example/p?k=v' })).toBe('GET https://h.example/p');
  });
});

describe('retry timing', () => {
  it('draws each wait from [0, min(5 s, 200 ms * 2^(n-1))]', () => {
    const almostOne = () => 0.999999;
    expect(backoffMs(1, almostOne)).toBe(199);
    expect(backoffMs(2, almostOne)).toBe(399);
    expect(backoffMs(5, almostOne)).toBe(3199);
    expect(backoffMs(6, almostOne)).toBe(4999);
    expect(backoffMs(20, almostOne)).toBe(4999);
    expect(backoffMs(3, () => 0)).toBe(0);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:04 GMT', now)).toBe(4000);
    expect(parseRetryAfter('soon')).toBeNull();
    expect(parseRetryAfter(undefined)).toBeNull();
  });
});
