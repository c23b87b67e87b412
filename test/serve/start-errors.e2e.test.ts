// What an operator reads when serve cannot start, through the binary: one line that names what is
// wrong and how to fix it, no stack trace, and exit 2 (the command line asks for something this
// machine cannot do; 1 is kept for errors in the configuration files).
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueFixture, runCli } from '../helpers/queue.js';
import { fixture, runServeToExit } from '../helpers/serve.js';
import { closedPort } from '../helpers/smtp-peer.js';

const STACK_TRACE = /^\s+at /m;
const BASIC = fixture('basic');
const refused = (args: readonly string[], env: Record<string, string | undefined> = {}) => runServeToExit(BASIC, ['--log-format', 'json', ...args], env);

describe('an address or port serve cannot listen on', () => {
  let taken: Server;
  let port: number;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => taken.close(resolve));
  });

  // Binding fails locally (EADDRNOTAVAIL) before any packet is sent.
  it.each([['1'], ['2']])('--host naming no address of this machine (--workers %s): one line naming it, exit 2', async (workers) => {
    const result = await refused(['--host', '10.255.255.1', '--port', '0', '--workers', workers]);
    expect(result.stderr).not.toMatch(STACK_TRACE);
    expect(result.stderr).toMatch(/cannot listen on 10\.255\.255\.1: it is not an address of this machine/);
    expect(result.stderr).toMatch(/--host/);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
  });

  it.each([['1'], ['2']])('a port in use (--workers %s): says so, suggests --port 0, exit 2', async (workers) => {
    const result = await refused(['--port', String(port), '--workers', workers]);
    expect(result.stderr).not.toMatch(STACK_TRACE);
    expect(result.stderr).toContain(`cannot listen on http://127.0.0.1:${port}: the port is already in use`);
    expect(result.stderr).toContain('--port 0');
    expect(result.code).toBe(2);
  });

  it('worker: the same for its /_health port and its --host', async () => {
    const store = `redis://127.0.0.1:${await closedPort()}`;
    const file = queueFixture('basic');
    const inUse = await runCli(['worker', file, '--queue', store, '--port', String(port), '--smtp-url', 'smtp://127.0.0.1:1'], { PEER: 'http://127.0.0.1:1', CRM_KEY: 'k' });
    expect(inUse.stderr).not.toMatch(STACK_TRACE);
    expect(inUse.stderr).toContain(`cannot listen on http://127.0.0.1:${port}: the port is already in use`);
    expect(inUse.code).toBe(2);
    const foreign = await runCli(['worker', file, '--queue', store, '--host', '10.255.255.1', '--port', '0', '--smtp-url', 'smtp://127.0.0.1:1'], { PEER: 'http://127.0.0.1:1', CRM_KEY: 'k' });
    expect(foreign.stderr).not.toMatch(STACK_TRACE);
    expect(foreign.stderr).toMatch(/cannot listen on 10\.255\.255\.1: it is not an address of this machine/);
    expect(foreign.code).toBe(2);
  });
});

describe('option values, said the way they are written', () => {
  it('--request-timeout 1d names the units a duration takes, and how to write a day', async () => {
    const result = await refused(['--port', '0', '--workers', '1', '--request-timeout', '1d']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/ms, s, m or h/);
    expect(result.stderr).toMatch(/write 1d as 24h/);
  });

  it('--request-timeout soon names the units too', async () => {
    const result = await refused(['--port', '0', '--workers', '1', '--request-timeout', 'soon']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/ms, s, m or h/);
  });

  it('--smtp-url localhost:2525 says a scheme is missing and how to write it, not "localhost://"', async () => {
    const result = await refused(['--port', '0', '--workers', '1', '--smtp-url', 'localhost:2525']);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain('localhost://');
    expect(result.stderr).toMatch(/needs smtp:\/\/ or smtps:\/\/ before the host: write smtp:\/\/localhost:2525/);
  });

  it('--smtp-url user:secret@mail.example:25 says the scheme is missing without echoing the password', async () => {
    const result = await refused(['--port', '0', '--workers', '1', '--smtp-url', 'user:secret@mail.example:25']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/needs smtp:\/\/ or smtps:\/\//);
    expect(result.stderr).not.toContain('secret');
  });
});
