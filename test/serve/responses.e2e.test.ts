// Every primary action and its statuses, through the real binary.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

let service: RunningService;
let upstream: HttpPeer;

beforeAll(async () => {
  upstream = await HttpPeer.start();
  upstream.route('/doc', { status: 200, headers: { 'content-type': 'text/csv' }, body: 'a,b\n1,2\n' });
  upstream.route('/missing', { status: 404, body: 'upstream says 404 at secret-host' });
  upstream.route('/big', { status: 200, streamBytes: 300 * 1024 });
  service = await startServe(fixture('basic'));
});
afterAll(async () => {
  await service?.stop();
  await upstream?.close();
});

async function problemOf(response: Response) {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  const body = (await response.json()) as Record<string, unknown>;
  // `errors` only beside a 400 for parameters: each one that is missing or not valid.
  const members = Object.keys(body).filter((k) => !(k === 'errors' && response.status === 400));
  expect(members.sort()).toEqual(['detail', 'requestId', 'status', 'title', 'type']);
  expect(body.type).toBe('about:blank');
  expect(body.status).toBe(response.status);
  expect(body.requestId).toBe(response.headers.get('x-request-id'));
  return body as { title: string; detail: string; status: number; requestId: string };
}

describe('routes', () => {
  it('answers an endpoint without actions with an empty 200', async () => {
    const response = await fetch(`${service.url}/empty`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('treats GET and POST alike', async () => {
    const response = await fetch(`${service.url}/empty`, { method: 'POST' });
    expect(response.status).toBe(200);
  });

  it('answers an unknown endpoint with a 404 problem', async () => {
    const response = await fetch(`${service.url}/nope`);
    expect(response.status).toBe(404);
    const body = await problemOf(response);
    expect(body.title).toBe('Not Found');
  });

  it('answers a path below an endpoint with a 404', async () => {
    expect((await fetch(`${service.url}/empty/more`)).status).toBe(404);
  });

  for (const method of ['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']) {
    it(`answers ${method} with 405 and an Allow header`, async () => {
      const response = await fetch(`${service.url}/empty`, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, POST');
      expect(response.headers.get('x-request-id')).not.toBeNull();
      if (method !== 'HEAD') await problemOf(response);
    });
  }

  it('gives every request its own id', async () => {
    const a = await fetch(`${service.url}/empty`);
    const b = await fetch(`${service.url}/empty`);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });

  it('answers /_health', async () => {
    const response = await fetch(`${service.url}/_health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
    expect(response.headers.get('x-request-id')).not.toBeNull();
  });

  it('serves Prometheus metrics by endpoint and status', async () => {
    await fetch(`${service.url}/empty`);
    await fetch(`${service.url}/nope`);
    const response = await fetch(`${service.url}/_metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toMatch(/endpoint_service_requests_total\{endpoint="empty",status="200"\} \d+/);
    expect(text).toMatch(/endpoint_service_requests_total\{endpoint="\(none\)",status="404"\} \d+/);
    expect(text).toContain('endpoint_service_request_duration_seconds_bucket{le="0.005",endpoint="empty"}');
  });
});

describe('response-body', () => {
  it('expands parameters, defaults and system values into a JSON body', async () => {
    const response = await fetch(`${service.url}/echo?name=J%C3%BCrgen%20%22Q%22`, { headers: { 'user-agent': 'tester/1' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = (await response.json()) as Record<string, string>;
    expect(body).toEqual({
      name: 'Jürgen "Q"',
      tag: 'none',
      lang: 'en',
      id: response.headers.get('x-request-id'),
      endpoint: 'echo',
      environment: 'live',
      ip: '127.0.0.1',
      agent: 'tester/1',
      base: service.url,
    });
  });

  it('uses the status and the default text content type', async () => {
    const response = await fetch(`${service.url}/choose?kind=created`);
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await response.text()).toBe('created');
  });

  it('falls back to the unconditional success', async () => {
    const response = await fetch(`${service.url}/choose?kind=other`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('fallback');
  });

  it('reports the environment', async () => {
    const response = await fetch(`${service.url}/echo?name=a&environment=preview`);
    expect(((await response.json()) as { environment: string }).environment).toBe('preview');
  });
});

describe('redirect-to', () => {
  it('redirects with 302 to a whitelisted URL', async () => {
    const response = await fetch(`${service.url}/choose?kind=go`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://good.example/next?k=go');
  });

  it('refuses a URL outside the whitelist with a 400', async () => {
    const response = await fetch(`${service.url}/go?to=${encodeURIComponent('https://good.example.evil.com/x')}`, { redirect: 'manual' });
    expect(response.status).toBe(400);
    expect((await problemOf(response)).detail).toContain('whitelist');
  });

  it('never lets a line break or non-ASCII from a request into the Location header', async () => {
    const to = 'https://good.example/a b\r\nset-cookie: x=1/ü';
    const response = await fetch(`${service.url}/go?to=${encodeURIComponent(to)}`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(response.headers.get('location')).toBe('https://good.example/a%20b%0D%0Aset-cookie:%20x=1/%C3%BC');
  });

  it('passes a URL whose host is the whitelist entry', async () => {
    const response = await fetch(`${service.url}/go?to=${encodeURIComponent('https://good.example/path')}`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://good.example/path');
  });
});

describe('response-from-static', () => {
  it('streams the file with its content type', async () => {
    const response = await fetch(`${service.url}/file`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBeNull();
    expect(await response.text()).toBe('hello from static\n');
  });

  it('sends a download filename as an attachment', async () => {
    const response = await fetch(`${service.url}/download?as=q3-report.txt`);
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="q3-report.txt"');
    expect(await response.text()).toBe('hello from static\n');
  });

  it('refuses an invalid download filename with a 400', async () => {
    const response = await fetch(`${service.url}/download?as=${encodeURIComponent('../x y')}`);
    expect(response.status).toBe(400);
    expect((await problemOf(response)).detail).toContain('download filename');
  });
});

describe('response-from-url', () => {
  it('streams the upstream body and content type', async () => {
    const response = await fetch(`${service.url}/proxy?upstream=${encodeURIComponent(upstream.url('/doc'))}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv');
    expect(await response.text()).toBe('a,b\n1,2\n');
  });

  it('sends a download filename for an upstream body', async () => {
    const response = await fetch(`${service.url}/proxy-download?upstream=${encodeURIComponent(upstream.url('/doc'))}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="data.csv"');
    expect(await response.text()).toBe('a,b\n1,2\n');
  });

  it('streams a large upstream body completely', async () => {
    const response = await fetch(`${service.url}/proxy?upstream=${encodeURIComponent(upstream.url('/big'))}`);
    expect(response.status).toBe(200);
    expect((await response.arrayBuffer()).byteLength).toBe(300 * 1024);
  });

  it('answers a non-2xx upstream with a 502 that does not leak the upstream', async () => {
    const response = await fetch(`${service.url}/proxy?upstream=${encodeURIComponent(upstream.url('/missing'))}`);
    expect(response.status).toBe(502);
    const body = await problemOf(response);
    expect(body.title).toBe('Bad Gateway');
    expect(JSON.stringify(body)).not.toContain('127.0.0.1');
    expect(JSON.stringify(body)).not.toContain('secret-host');
  });

  it('answers an unreachable upstream with a 502', async () => {
    const closed = await HttpPeer.start();
    const url = closed.url('/x');
    await closed.close();
    const response = await fetch(`${service.url}/proxy?upstream=${encodeURIComponent(url)}`);
    expect(response.status).toBe(502);
    expect(JSON.stringify(await problemOf(response))).not.toContain('ECONNREFUSED');
  });
});

describe('forward-to-endpoint', () => {
  it('passes the bound parameters on and answers with the target, same request id', async () => {
    const response = await fetch(`${service.url}/forward?name=Ada&lang=de`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, string>;
    expect(body.name).toBe('Ada');
    expect(body.lang).toBe('de');
    expect(body.endpoint).toBe('echo');
    expect(body.id).toBe(response.headers.get('x-request-id'));
  });

  it('passes only the input parameters when there are some', async () => {
    const response = await fetch(`${service.url}/forward-input?first=Bo&tag=ignored`);
    const body = (await response.json()) as Record<string, string>;
    expect(body.name).toBe('Bo!');
    expect(body.tag).toBe('none');
  });

  it("answers with the target's error when the target fails", async () => {
    const response = await fetch(`${service.url}/forward`);
    expect(response.status).toBe(400);
    expect((await problemOf(response)).detail).toBe('missing required parameter "name"');
  });
});

describe('errors', () => {
  it('names a missing parameter in a 400 problem', async () => {
    const response = await fetch(`${service.url}/echo`);
    expect(response.status).toBe(400);
    const body = await problemOf(response);
    expect(body.title).toBe('Bad Request');
    expect(body.detail).toBe('missing required parameter "name"');
    expect((body as unknown as { errors: unknown }).errors).toEqual([{ parameter: 'name', detail: 'missing required parameter "name"' }]);
  });

  it('counts a blank value of a required parameter as missing', async () => {
    const response = await fetch(`${service.url}/echo?name=%20%20`);
    expect(response.status).toBe(400);
    expect((await problemOf(response)).detail).toBe('missing required parameter "name"');
  });

  it('refuses an environment other than live or preview', async () => {
    const response = await fetch(`${service.url}/echo?name=a&environment=staging`);
    expect(response.status).toBe(400);
    expect((await problemOf(response)).detail).toContain('environment');
  });

  it("uses the author's error action, keeping the failure status, with the internal error text", async () => {
    const response = await fetch(`${service.url}/custom-error`);
    expect(response.status).toBe(400);
    const id = response.headers.get('x-request-id');
    expect(await response.text()).toBe(`sorry: missing required parameter "needed" (${id})`);
  });

  it('answers a static error action with the failure status', async () => {
    const response = await fetch(`${service.url}/error-static`);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await response.text()).toBe('hello from static\n');
  });

  it('answers a redirect error action with 302', async () => {
    const response = await fetch(`${service.url}/error-redirect`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(`https://good.example/oops?id=${response.headers.get('x-request-id')}`);
  });

  it('uses the error action for a failing upstream', async () => {
    const response = await fetch(`${service.url}/upstream-error?upstream=${encodeURIComponent(upstream.url('/missing'))}`);
    expect(response.status).toBe(503);
    expect(await response.text()).toBe('upstream trouble');
  });

  it('lets an error response-body set its own status', async () => {
    const response = await fetch(`${service.url}/error-status`);
    expect(response.status).toBe(422);
    expect(await response.text()).toBe('bad input');
  });

  it('honours an error response-body status written as 200', async () => {
    const response = await fetch(`${service.url}/error-status-200`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('soft failure');
  });
});

describe('logs', () => {
  it('writes one JSON line per request with id, endpoint, status and duration', async () => {
    const response = await fetch(`${service.url}/empty?password=hunter2`);
    const id = response.headers.get('x-request-id');
    const line = await service.waitForLog((l) => l.requestId === id && l.msg === 'request');
    expect(line).toMatchObject({ endpoint: 'empty', status: 200, method: 'GET', path: '/empty' });
    expect(typeof line.durationMs).toBe('number');
    expect(service.stderr()).not.toContain('hunter2');
  });
});
