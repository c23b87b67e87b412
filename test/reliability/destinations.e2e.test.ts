// Values of the request must not steer where the service's own requests go (issue 19), through
// the real binary with real peers: dot segments from values, --allow-task-host for
// response-from-url, --deny-private-addresses (peers count their connections: a refusal is
// never a connection), the lints of validate, and X-Content-Type-Options on every answer.
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateRange } from '../../src/tasks/outbound.js';
import { HttpPeer } from '../helpers/http-peer.js';
import { StartedServices, type RunningService } from '../helpers/serve.js';
import { RELIABILITY_FIXTURES, head, rawRequest } from './raw.js';

const BIN = fileURLToPath(new URL('../../bin/endpoint-service.js', import.meta.url));
const APP = `${RELIABILITY_FIXTURES}destinations/endpoints.xml`;
const HASH_APP = `${RELIABILITY_FIXTURES}destinations/hash/endpoints.xml`;

const services = new StartedServices();
let peer: HttpPeer;
beforeAll(async () => {
  peer = await HttpPeer.start();
  peer.route('/users/a..b/profile', { status: 200 }).route('/users/.../profile', { status: 200 }).route('/users/a%2Fb/profile', { status: 200 });
  peer.route('/hook', { status: 200, body: 'hook' });
});
afterAll(async () => {
  await services.stopAll();
  await peer?.close();
});

interface Problem {
  status: number;
  detail: string;
  errors?: { parameter: string; detail: string }[];
}

describe('no dot segments from values', () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await services.start(APP, [], { PEER: peer.origin });
  });

  // As a client writes them in the query string: each decodes to "." or "..".
  const refused = ['..', '.', '%2e%2E', '.%2E', '%2E'];

  it.each(refused)('id=%s is refused with 400 naming "id", for a task and for response-from-url, and the upstream sees nothing', async (id) => {
    const connections = peer.connections;
    const requests = peer.requests.length;
    for (const endpoint of ['user', 'proxy-user']) {
      const response = await fetch(`${service.url}/${endpoint}?id=${id}`);
      expect(response.status, endpoint).toBe(400);
      const problem = (await response.json()) as Problem;
      expect(problem.errors?.map((e) => e.parameter)).toEqual(['id']);
      expect(problem.detail).toMatch(/"id".*"\.\." segment/);
    }
    expect(peer.connections).toBe(connections);
    expect(peer.requests.length).toBe(requests);
  });

  it.each([
    ['a..b', '/users/a..b/profile'],
    ['...', '/users/.../profile'],
    ['a%2Fb', '/users/a%2Fb/profile'],
  ])('id=%s still works: the upstream gets %s', async (id, path) => {
    for (const endpoint of ['user', 'proxy-user']) {
      const before = peer.requestsTo(path).length;
      const response = await fetch(`${service.url}/${endpoint}?id=${id}`);
      expect(response.status, endpoint).toBe(200);
      await response.arrayBuffer();
      expect(peer.requestsTo(path).length, endpoint).toBe(before + 1);
      expect(peer.requestsTo(path).at(-1)!.url).toBe(path);
    }
  });

  const dryRun = (endpoint: string, id: string) =>
    execa('node', [BIN, 'dry-run', '--endpoint', endpoint, '--param', `id=${id}`, '--format', 'json', APP], { reject: false, env: { PEER: 'https://api.example.com' } });

  it('dry-run gives the same refusal, and prints the URL that is sent', async () => {
    for (const endpoint of ['user-fixed', 'proxy-user']) {
      const r = await dryRun(endpoint, '..');
      expect(r.exitCode, endpoint).toBe(1);
      expect(r.stderr).toMatch(/status 400: parameter "id" makes a "\." or "\.\." segment/);
    }
    const ok = await dryRun('user-fixed', 'a..b');
    expect(ok.exitCode).toBe(0);
    const plan = JSON.parse(ok.stdout) as { endpoints: { tasks: { request?: { url: string } }[] }[] };
    expect(plan.endpoints[0]!.tasks[0]!.request!.url).toBe('https://api.example.com/users/a..b/profile');
  });
});

describe('X-Content-Type-Options: nosniff on every answer', () => {
  let service: RunningService;
  beforeAll(async () => {
    service = await services.start(APP, [], { PEER: peer.origin });
  });

  it.each([
    ['an endpoint echoing a value as text/plain', 'GET', '/echo?a=%3Cb%3E', 200],
    ['a static file', 'GET', '/file', 200],
    ['a 404', 'GET', '/nothing-here', 404],
    ['a 405', 'PUT', '/echo', 405],
    ['a 400 for parameters', 'GET', '/echo', 400],
    ['/_health', 'GET', '/_health', 200],
    ['/_health with HEAD', 'HEAD', '/_health', 200],
    ['/_metrics', 'GET', '/_metrics', 200],
  ])('%s', async (_what, method, path, status) => {
    const response = await fetch(service.url + path, { method });
    expect(response.status).toBe(status);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    await response.arrayBuffer();
  });

  it('an HTML error page for a browser', async () => {
    const response = await fetch(`${service.url}/echo`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    await response.arrayBuffer();
  });

  it('a request that is not valid HTTP (the raw 400 written to the socket)', async () => {
    const answer = await rawRequest(service.url, 'GET /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n');
    expect(answer.text).toMatch(/^HTTP\/1\.1 400/);
    expect(answer.text).toMatch(/^x-content-type-options: nosniff\r$/im);
    // A good request still works afterwards.
    const after = await rawRequest(service.url, head('GET /echo?a=1 HTTP/1.1'));
    expect(after.text).toMatch(/^HTTP\/1\.1 200/);
  });
});

describe('--allow-task-host covers response-from-url, redirects included', () => {
  let other: HttpPeer;
  let service: RunningService;
  beforeAll(async () => {
    other = await HttpPeer.start();
    other.route('/doc', { status: 200, body: 'other' });
    peer.route('/doc', { status: 200, body: 'doc' }).route('/bounce', (r) => ({ status: 302, headers: { location: String(r.query.get('to')) } }));
    service = await services.start(APP, ['--allow-task-host', '127.0.0.1'], { PEER: peer.origin });
  });
  afterAll(async () => {
    await other?.close();
  });

  const proxy = (url: string) => fetch(`${service.url}/proxy?url=${encodeURIComponent(url)}`);

  it('an allowed host answers; another host, directly or by redirect, is refused before connecting', async () => {
    const allowed = await proxy(peer.url('/doc'));
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toBe('doc');

    const refused = await proxy(`http://localhost:${other.port}/doc`);
    expect(refused.status).toBe(502);
    const line = await service.waitForLog((l) => l.msg === 'primary action failed' && l.requestId === refused.headers.get('x-request-id'));
    expect(String(line.reason)).toMatch(/"localhost" is not allowed.*--allow-task-host/);

    const bounced = await proxy(peer.url(`/bounce?to=${encodeURIComponent(`http://localhost:${other.port}/doc`)}`));
    expect(bounced.status).toBe(502);
    const bounceLine = await service.waitForLog((l) => l.msg === 'primary action failed' && l.requestId === bounced.headers.get('x-request-id'));
    expect(String(bounceLine.reason)).toMatch(/redirect refused: the host "localhost" is not allowed/);
    expect(other.connections).toBe(0);
  });
});

describe('serve --deny-private-addresses', () => {
  let v6: HttpPeer | null = null;
  beforeAll(async () => {
    try {
      v6 = await HttpPeer.start('::1');
      v6.route('/hook', { status: 200 });
    } catch {
      v6 = null; // no IPv6 loopback here: the refusal is still checked, the connection count is not
    }
  });
  afterAll(async () => {
    await v6?.close();
  });

  it('knows the ranges it refuses, and lets public addresses through', () => {
    const ranges = Object.fromEntries(
      ['127.0.0.1', '127.255.0.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '0.0.0.0', '::1', '::', 'fd12::1', 'fe80::1', '::ffff:10.0.0.1', '8.8.8.8', '172.32.0.1', '2001:db8::1', '100.64.0.1'].map((a) => [a, privateRange(a)]),
    );
    expect(ranges).toEqual({
      '127.0.0.1': 'loopback', '127.255.0.9': 'loopback', '10.1.2.3': 'private', '172.16.0.1': 'private', '172.31.255.255': 'private', '192.168.1.1': 'private',
      '169.254.169.254': 'link-local', '0.0.0.0': 'unspecified', '::1': 'loopback', '::': 'unspecified', 'fd12::1': 'private', 'fe80::1': 'link-local',
      '::ffff:10.0.0.1': 'private', '8.8.8.8': null, '172.32.0.1': null, '2001:db8::1': null, '100.64.0.1': null,
    });
  });

  const call = (service: RunningService, endpoint: 'callback' | 'proxy', url: string) => fetch(`${service.url}/${endpoint}?url=${encodeURIComponent(url)}`);

  it('refuses loopback, link-local (metadata) and a name resolving to loopback, for tasks and response-from-url, without connecting', async () => {
    const service = await services.start(APP, ['--deny-private-addresses'], { PEER: peer.origin });
    const connections = peer.connections;
    const targets: [string, RegExp][] = [
      [peer.url('/hook'), /the address 127\.0\.0\.1, a loopback address/],
      [`http://[::1]:${v6?.port ?? peer.port}/hook`, /the address ::1, a loopback address/],
      ['http://169.254.169.254/latest/meta-data/', /the address 169\.254\.169\.254, a link-local address/],
      [`http://localhost:${peer.port}/hook`, /the host "localhost" resolves to (127\.0\.0\.1|::1), a loopback address/],
      [`http://0x7f.1:${peer.port}/hook`, /the address 127\.0\.0\.1, a loopback address/],
      [`http://[::ffff:127.0.0.1]:${peer.port}/hook`, /the address ::ffff:7f00:1, a loopback address/],
    ];
    for (const [url, reason] of targets) {
      const task = await call(service, 'callback', url);
      expect(task.status, url).toBe(502);
      const line = await service.waitForLog((l) => l.msg === 'task' && l.requestId === task.headers.get('x-request-id'));
      expect(line.outcome).toBe('failed');
      expect(line.code).toBe('host-not-allowed');
      expect(String(line.error)).toMatch(reason);

      const upstream = await call(service, 'proxy', url);
      expect(upstream.status, url).toBe(502);
      const primary = await service.waitForLog((l) => l.msg === 'primary action failed' && l.requestId === upstream.headers.get('x-request-id'));
      expect(String(primary.reason)).toMatch(reason);
    }
    expect(peer.connections).toBe(connections);
    if (v6 !== null) expect(v6.connections).toBe(0);
  });

  it('an --allow-task-host address or CIDR range lets its addresses through', async () => {
    for (const entry of ['127.0.0.1', '127.0.0.0/8']) {
      const service = await services.start(APP, ['--deny-private-addresses', '--allow-task-host', entry], { PEER: peer.origin });
      const connections = peer.connections;
      const task = await call(service, 'callback', peer.url('/hook'));
      expect(task.status, entry).toBe(200);
      const upstream = await call(service, 'proxy', peer.url('/hook'));
      expect(upstream.status, entry).toBe(200);
      expect(await upstream.text()).toBe('hook');
      expect(peer.connections, entry).toBeGreaterThan(connections);
    }
  });

  it('checks every redirect hop after DNS: an allowed name that resolves to a refused address is not connected to', async () => {
    // The first hop goes to an address the list names; the redirect to a name the list allows
    // by name, but whose address (loopback, not listed) is refused once resolved.
    const first = await HttpPeer.start('127.0.0.2');
    try {
      first.route('/bounce', (r) => ({ status: 302, headers: { location: String(r.query.get('to')) } }));
      const service = await services.start(APP, ['--deny-private-addresses', '--allow-task-host', '127.0.0.2,localhost'], { PEER: peer.origin });
      const connections = peer.connections;
      const target = `http://localhost:${peer.port}/hook`;
      for (const endpoint of ['callback', 'proxy'] as const) {
        const response = await call(service, endpoint, first.url(`/bounce?to=${encodeURIComponent(target)}`));
        expect(response.status, endpoint).toBe(502);
        await response.arrayBuffer();
      }
      expect(first.requestsTo('/bounce').length).toBe(2);
      const line = await service.waitForLog((l) => l.msg === 'task' && l.outcome === 'failed');
      expect(line.code).toBe('host-not-allowed');
      expect(String(line.error)).toMatch(/the host "localhost" resolves to (127\.0\.0\.1|::1), a loopback address/);
      expect(peer.connections).toBe(connections);
    } finally {
      await first.close();
    }
  });

  it('is listed in serve --help, and a malformed range is a usage error', async () => {
    const help = await execa('node', [BIN, 'serve', '--help'], { reject: false });
    expect(help.stdout).toMatch(/--deny-private-addresses/);
    const bad = await execa('node', [BIN, 'serve', '--allow-task-host', '10.0.0.0/33', APP], { reject: false });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/10\.0\.0\.0\/33/);
  });
});

describe('validate lints what a configuration author may not have meant', () => {
  const codes = async (file: string) => {
    const r = await execa('node', [BIN, 'validate', '--format', 'json', file], { reject: false, env: { PEER: 'https://api.example.com' } });
    return (JSON.parse(r.stdout) as { diagnostics: { code: string; line: number }[] }).diagnostics.map((d) => `${d.code}:${d.line}`);
  };

  it('a host from a request parameter is a warning; hosts from ${env:...} are not', async () => {
    expect(await codes(APP)).toEqual(['destination-from-request:23', 'destination-from-request:28']);
    const strict = await execa('node', [BIN, 'validate', '--max-warnings', '0', APP], { reject: false, env: { PEER: 'https://api.example.com' } });
    expect(strict.exitCode).toBe(1);
  });

  it('a recipient from a request parameter is no warning on an endpoint with hash authentication', async () => {
    expect(await codes(HASH_APP)).toEqual(['smtp-not-configured:7']);
  });
});
