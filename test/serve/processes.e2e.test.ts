// Starting, refusing to start, shutdown, --watch, --workers, --cors and --base-path.
import { connect } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { fixture, runServeToExit, StartedServices, writeAndWaitUntilRead } from '../helpers/serve.js';

const services = new StartedServices();
const start = services.start;
afterAll(async () => {
  await services.stopAll();
});

/** A GET on a connection of its own (the pool of fetch would reuse a closed one). */
function getOnce(url: string): Promise<{ status: number; body: string }> {
  return fetch(url, { headers: { connection: 'close' } }).then(async (r) => ({ status: r.status, body: await r.text() }));
}

describe('starting', () => {
  it('prints exactly one ready line on stdout and logs on stderr', async () => {
    const service = await start(fixture('basic'));
    expect(service.stdout()).toBe(`endpoint-service listening on ${service.url}\n`);
    expect(service.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await fetch(`${service.url}/empty`);
    await service.waitForLog((l) => l.msg === 'request');
    expect(service.stdout()).toBe(`endpoint-service listening on ${service.url}\n`);
    expect((await service.stop()).code).toBe(0);
  });

  it('writes readable log lines with --log-format pretty', async () => {
    const service = await start(fixture('basic'), ['--log-format', 'pretty']);
    const response = await fetch(`${service.url}/empty`);
    const id = response.headers.get('x-request-id')!;
    await service.waitForStderr(id);
    const line = service
      .stderr()
      .split('\n')
      .find((l) => l.includes(id))!;
    expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}200 GET \/empty [\d.]+ms [0-9a-f-]{36}$/);
  });

  it('refuses an invalid application: diagnostics in the text format on stderr, exit 1', async () => {
    const result = await runServeToExit(fixture('broken'), ['--port', '0', '--workers', '1']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/endpoints\.xml:4:5 {2}error {2}unknown-element {2}/);
    expect(result.stderr).toContain('1 error, 0 warnings');
  });

  it('with --workers 3, prints the diagnostics once (the workers compile side by side) and exits as one process would', async () => {
    const result = await runServeToExit(fixture('broken'), ['--port', '0', '--workers', '3']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.match(/error {2}unknown-element/g)).toHaveLength(1);
    expect(result.stderr.match(/1 error, 0 warnings/g)).toHaveLength(1);
    // Nothing but the report: no log line from the quiet workers, no "could not start".
    expect(result.stderr).not.toContain('{"time"');
    expect(result.stderr).not.toContain('could not start');
    const unreadable = await runServeToExit(join(tmpdir(), 'no-such-dir', 'endpoints.xml'), ['--port', '0', '--workers', '2']);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr.match(/no-such-dir/g)).toHaveLength(1);
  });

  it('refuses an unreadable file with exit 2', async () => {
    const result = await runServeToExit(join(tmpdir(), 'no-such-dir', 'endpoints.xml'), ['--port', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no-such-dir');
  });

  it('refuses bad option values with exit 2', async () => {
    for (const args of [
      ['--port', 'x'],
      ['--workers', '0'],
      ['--shutdown-timeout', '10'],
      ['--max-body-size', '-1'],
      ['--log-format', 'xml'],
      ['--base-path', 'app'],
    ]) {
      const result = await runServeToExit(fixture('basic'), args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(/error/);
    }
  });

  it('uses $PORT when --port is not given, and refuses a bad one', async () => {
    const refused = await runServeToExit(fixture('basic'), ['--workers', '1'], { PORT: 'not-a-port' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('PORT');

    const probe = await HttpPeer.start();
    const port = probe.port;
    await probe.close();
    const service = await start(fixture('basic'), [], { PORT: String(port) });
    expect(service.url).toBe(`http://127.0.0.1:${port}`);
  });
});

describe('shutdown', () => {
  it('finishes a request in flight on SIGTERM, refuses new connections, then exits 0', async () => {
    const peer = await HttpPeer.start();
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    peer.route('/slow', { status: 200, headers: { 'content-type': 'text/plain' }, body: 'finally', hold: () => released });
    try {
      const service = await start(fixture('basic'));
      const inFlight = getOnce(`${service.url}/proxy?upstream=${encodeURIComponent(peer.url('/slow'))}`);
      await peer.waitForRequests(1, '/slow');
      service.child.kill('SIGTERM');
      await service.waitForLog((l) => l.msg === 'shutting down');
      await expect(getOnce(`${service.url}/empty`)).rejects.toThrow();
      expect(service.child.exitCode).toBeNull();
      release();
      expect(await inFlight).toEqual({ status: 200, body: 'finally' });
      expect(await service.exited).toEqual({ code: 0, signal: null });
    } finally {
      release();
      await peer.close();
    }
  });

  it('answers /_health with 503 while shutting down', async () => {
    const peer = await HttpPeer.start();
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    peer.route('/slow', { status: 200, body: 'x', hold: () => released });
    try {
      const service = await start(fixture('basic'));
      const { port, hostname } = new URL(service.url);
      // Keep a request in flight so the process stays up, and a second connection mid-request.
      const inFlight = getOnce(`${service.url}/proxy?upstream=${encodeURIComponent(peer.url('/slow'))}`);
      await peer.waitForRequests(1, '/slow');
      const socket = connect(Number(port), hostname);
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      // Shutdown closes connections that have sent nothing yet: the server must have read these
      // first bytes for the connection to count as one with a request under way.
      await writeAndWaitUntilRead(service.url, socket, 'GET /_health HTTP/1.1\r\nHost: x\r\n');
      service.child.kill('SIGINT');
      await service.waitForLog((l) => l.msg === 'shutting down');
      const answer = new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (d: Buffer) => (text += d.toString()));
        socket.on('close', () => resolve(text));
      });
      socket.write('\r\n');
      expect(await answer).toMatch(/^HTTP\/1\.1 503 /);
      release();
      await inFlight;
      expect((await service.exited).code).toBe(0);
    } finally {
      release();
      await peer.close();
    }
  });

  it('waits for background tasks before exiting', async () => {
    const peer = await HttpPeer.start();
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    peer.route('/slow', { status: 200, body: 'late', hold: () => released });
    try {
      const service = await start(fixture('tasks'), ['--smtp-url', 'smtp://127.0.0.1:9'], { PEER: peer.origin });
      const response = await getOnce(`${service.url}/later`);
      expect(response.status).toBe(200);
      await peer.waitForRequests(1, '/slow');
      service.child.kill('SIGTERM');
      await service.waitForLog((l) => l.msg === 'shutting down');
      expect(service.child.exitCode).toBeNull();
      release();
      expect((await service.exited).code).toBe(0);
      expect(service.logs().some((l) => l.msg === 'task' && l.task === 'slow' && l.outcome === 'succeeded')).toBe(true);
    } finally {
      release();
      await peer.close();
    }
  });

  it('exits 0 at --shutdown-timeout even when a request never ends', async () => {
    const peer = await HttpPeer.start();
    peer.route('/never', { never: true });
    try {
      const service = await start(fixture('basic'), ['--shutdown-timeout', '200ms']);
      const inFlight = getOnce(`${service.url}/proxy?upstream=${encodeURIComponent(peer.url('/never'))}`).catch((e: Error) => e);
      await peer.waitForRequests(1, '/never');
      service.child.kill('SIGTERM');
      expect((await service.exited).code).toBe(0);
      expect(await inFlight).toBeInstanceOf(Error);
      expect(service.stderr()).toContain('shutdown timeout');
    } finally {
      await peer.close();
    }
  });
});

describe('--watch', () => {
  it('switches to a valid new version and keeps the old one over a broken one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'endpoint-service-watch-'));
    const file = join(dir, 'endpoints.xml');
    const version = (text: string) =>
      `<?xml version="1.0"?>\n<endpoint-folder>\n  <endpoint name="v">\n    <success><response-body>${text}</response-body></success>\n  </endpoint>\n</endpoint-folder>\n`;
    writeFileSync(file, version('one'));
    try {
      const service = await start(file, ['--watch']);
      expect((await getOnce(`${service.url}/v`)).body).toBe('one');

      writeFileSync(file, version('two').replace('<success>', '<sucess>').replace('</success>', '</sucess>'));
      await service.waitForStderr('unknown-element');
      await service.waitForLog((l) => l.msg === `${file} has errors; still serving the previous version`);
      expect(await getOnce(`${service.url}/v`)).toEqual({ status: 200, body: 'one' });

      writeFileSync(file, version('three'));
      await service.waitForLog((l) => l.msg === 'application reloaded');
      expect(await getOnce(`${service.url}/v`)).toEqual({ status: 200, body: 'three' });
      expect((await service.stop()).code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('--workers 2', () => {
  it('serves from two processes on one port, replaces a dead one, sums metrics, and stops on SIGTERM', async () => {
    const service = await start(fixture('basic'), ['--workers', '2']);
    expect(service.stdout()).toBe(`endpoint-service listening on ${service.url}\n`);
    for (let i = 0; i < 6; i++) expect((await getOnce(`${service.url}/empty`)).status).toBe(200);
    await service.waitForLog(() => service.logs().filter((l) => l.msg === 'request' && l.path === '/empty').length >= 6);
    const pids = new Set(
      service
        .logs()
        .filter((l) => l.msg === 'request')
        .map((l) => l.pid),
    );
    expect(pids.size).toBe(2);

    const metrics = await (await fetch(`${service.url}/_metrics`, { headers: { connection: 'close' } })).text();
    expect(metrics).toMatch(/endpoint_service_requests_total\{endpoint="empty",status="200"\} 6\b/);

    const victim = [...pids][0] as number;
    process.kill(victim, 'SIGKILL');
    await service.waitForLog((l) => l.msg === 'a worker process died; starting a new one');
    for (let i = 0; i < 4; i++) expect((await getOnce(`${service.url}/empty`)).status).toBe(200);

    expect(await service.stop()).toEqual({ code: 0, signal: null });
  });

  // A stopped process answers nothing, as one whose event loop is blocked: the primary must
  // notice through its health probe, since such a worker never exits on its own.
  it('replaces a worker that stops answering its health probe', { timeout: 60_000 }, async () => {
    const service = await start(fixture('basic'), ['--workers', '2']);
    const requests = () => service.logs().filter((l) => l.msg === 'request' && l.path === '/empty');
    for (let i = 0; i < 6; i++) expect((await getOnce(`${service.url}/empty`)).status).toBe(200);
    await service.waitForLog(() => requests().length >= 6);
    const pids = new Set(requests().map((l) => l.pid as number));
    expect(pids.size).toBe(2);
    const victim = [...pids][0]!;
    process.kill(victim, 'SIGSTOP');
    try {
      const replaced = await service.waitForLog((l) => l.msg === 'a worker process stopped answering; replacing it');
      expect(replaced.pid).toBe(victim);
      await service.waitForLog((l) => l.msg === 'a worker process died; starting a new one' && l.pid === victim);
      // The stopped worker is gone, not merely ignored.
      expect(() => process.kill(victim, 0)).toThrow();
      // Every connection is answered again, health checks included, and a new worker serves.
      for (let i = 0; i < 6; i++) expect((await getOnce(`${service.url}/_health`)).status).toBe(200);
      const before = requests().length;
      const fresh = () =>
        requests()
          .slice(before)
          .find((l) => !pids.has(l.pid as number));
      while (fresh() === undefined) {
        const count = requests().length;
        expect((await getOnce(`${service.url}/empty`)).status).toBe(200);
        await service.waitForLog(() => requests().length > count);
      }
      expect(
        requests()
          .slice(before)
          .some((l) => l.pid === victim),
      ).toBe(false);
    } finally {
      // Whatever happened, never leave a stopped process behind.
      try {
        process.kill(victim, 'SIGKILL');
      } catch {
        // Already gone: what the test expects.
      }
    }
    expect(await service.stop()).toEqual({ code: 0, signal: null });
  });

  // A worker that died is replaced, after a delay when it died young; a SIGTERM meanwhile must
  // stop the replacement too (not fork it afterwards), and one still compiling when it comes
  // (it listens for no message yet) must be stopped rather than left running.
  it('stops on SIGTERM while the replacement of a dead worker is still to start', { timeout: 25_000 }, async () => {
    const service = await start(fixture('basic'), ['--workers', '2', '--shutdown-timeout', '60s']);
    const requests = () => service.logs().filter((l) => l.msg === 'request' && l.path === '/empty');
    expect((await getOnce(`${service.url}/empty`)).status).toBe(200);
    const victim = (await service.waitForLog(() => requests().length >= 1), requests()[0]!.pid as number);
    // A worker that lived 5 s is replaced at once (a younger one after a delay): its replacement
    // is then still compiling, deaf to messages, when the SIGTERM below comes.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    process.kill(victim, 'SIGKILL');
    const died = await service.waitForLog((l) => l.msg === 'a worker process died; starting a new one' && l.pid === victim);
    expect(died.restartInMs).toBe(0);
    expect(await service.stop()).toEqual({ code: 0, signal: null });
  });

  // The probe counts unanswered probes, not time: a primary that was held itself (here
  // stopped for longer than the bound) finds its workers' answers waiting and replaces none.
  it('replaces no worker when the primary itself was held for longer than the bound', { timeout: 60_000 }, async () => {
    const service = await start(fixture('basic'), ['--workers', '2']);
    const primary = service.child.pid!;
    process.kill(primary, 'SIGSTOP');
    try {
      await new Promise((resolve) => setTimeout(resolve, 13_000));
    } finally {
      process.kill(primary, 'SIGCONT');
    }
    // Three probe rounds after the primary resumed: a worker it took for dead would be gone by now.
    await new Promise((resolve) => setTimeout(resolve, 6_500));
    expect(service.logs().filter((l) => l.msg === 'a worker process stopped answering; replacing it')).toEqual([]);
    expect(service.logs().filter((l) => l.msg === 'a worker process died; starting a new one')).toEqual([]);
    for (let i = 0; i < 4; i++) expect((await getOnce(`${service.url}/empty`)).status).toBe(200);
    expect(await service.stop()).toEqual({ code: 0, signal: null });
  });
});

// A bug that throws outside any request's promise leaves the process in a state Node calls
// undefined: it drains what runs, exits 70, and is replaced (--workers N) or restarted by its
// supervisor (one process). The fault is injected from outside the product's code.
describe('after an uncaught exception', () => {
  const THROWER = { NODE_OPTIONS: `--import ${new URL('../helpers/throw-on-sigusr2.mjs', import.meta.url).href}` };

  it('one process finishes the request in flight, then exits 70', async () => {
    const peer = await HttpPeer.start();
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    peer.route('/slow', { status: 200, headers: { 'content-type': 'text/plain' }, body: 'finally', hold: () => released });
    try {
      const service = await start(fixture('basic'), ['--workers', '1'], THROWER);
      const inFlight = getOnce(`${service.url}/proxy?upstream=${encodeURIComponent(peer.url('/slow'))}`);
      await peer.waitForRequests(1, '/slow');
      service.child.kill('SIGUSR2');
      const logged = await service.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('uncaught exception'));
      expect(String(logged.error)).toContain('injected fault');
      await expect(getOnce(`${service.url}/empty`)).rejects.toThrow();
      release();
      expect(await inFlight).toEqual({ status: 200, body: 'finally' });
      expect(await service.exited).toEqual({ code: 70, signal: null });
    } finally {
      release();
      await peer.close();
    }
  });

  it('with --workers 2, the worker that threw is replaced and the service goes on', async () => {
    const service = await start(fixture('basic'), ['--workers', '2'], THROWER);
    const requests = () => service.logs().filter((l) => l.msg === 'request' && l.path === '/empty');
    expect((await getOnce(`${service.url}/empty`)).status).toBe(200);
    const victim = (await service.waitForLog(() => requests().length >= 1), requests()[0]!.pid as number);
    process.kill(victim, 'SIGUSR2');
    const died = await service.waitForLog((l) => l.msg === 'a worker process died; starting a new one' && l.pid === victim);
    expect(died.exitCode).toBe(70);
    for (let i = 0; i < 4; i++) expect((await getOnce(`${service.url}/empty`)).status).toBe(200);
    expect(await service.stop()).toEqual({ code: 0, signal: null });
  });
});

describe('--cors and --base-path', () => {
  it('serves endpoints below the base path, health and metrics at the root', async () => {
    const service = await start(fixture('basic'), ['--base-path', '/app/']);
    expect((await getOnce(`${service.url}/app/empty`)).status).toBe(200);
    expect((await getOnce(`${service.url}/empty`)).status).toBe(404);
    expect((await getOnce(`${service.url}/_health`)).status).toBe(200);
    expect((await getOnce(`${service.url}/_metrics`)).status).toBe(200);
    const echo = JSON.parse((await getOnce(`${service.url}/app/echo?name=a`)).body) as { base: string };
    expect(echo.base).toBe(`${service.url}/app`);
  });

  it('answers allowed origins and preflights, refuses other preflights', async () => {
    const service = await start(fixture('basic'), ['--cors', 'https://app.example, https://admin.example']);
    const simple = await fetch(`${service.url}/empty`, { headers: { origin: 'https://app.example' } });
    expect(simple.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(simple.headers.get('vary')).toBe('Origin');

    // A page of another origin is refused before anything runs (its tasks would run unseen).
    const other = await fetch(`${service.url}/empty`, { headers: { origin: 'https://evil.example' } });
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(((await other.json()) as { detail: string }).detail).toBe('origin https://evil.example is not allowed');

    // No Origin (curl, servers) and the service's own origin are not cross-origin.
    expect((await fetch(`${service.url}/empty`)).status).toBe(200);
    expect((await fetch(`${service.url}/empty`, { headers: { origin: service.url } })).status).toBe(200);

    const preflight = await fetch(`${service.url}/empty`, {
      method: 'OPTIONS',
      headers: { origin: 'https://admin.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-custom' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://admin.example');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, POST');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type,x-custom');

    const refused = await fetch(`${service.url}/empty`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
  });

  it('answers any origin with * when configured so', async () => {
    const service = await start(fixture('basic'), ['--cors', '*']);
    const response = await fetch(`${service.url}/empty`, { headers: { origin: 'https://any.example' } });
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });
});
