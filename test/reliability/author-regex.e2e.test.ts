// Regular expressions written by the author run in time linear in the value's length (RE2
// semantics), through the built binary: a pattern that backtracks for ever in a JavaScript
// RegExp answers a request at once, and checks a default-value at compile time without
// hanging validate or dry-run. No timing threshold: each of these hung for ever before, so the
// test's own timeout is what fails them.
import { execa } from 'execa';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { ROOT, StartedServices } from '../helpers/serve.js';

/** Words separated by single spaces, written so that a backtracking engine tries every split. */
const WORDS = '([A-Za-z]+ ?)*';
/** 40 letters and a character the pattern refuses: 2^40 ways to split for a backtracking engine. */
const HOSTILE = `${'a'.repeat(40)}!`;

const BIN = path.join(ROOT, 'bin/endpoint-service.js');
const dirs: string[] = [];
const services = new StartedServices();
const peers: HttpPeer[] = [];
afterAll(async () => {
  await services.stopAll();
  await Promise.all(peers.map((peer) => peer.close()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function app(xml: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'es-regex-'));
  dirs.push(dir);
  const file = path.join(dir, 'endpoints.xml');
  writeFileSync(file, xml);
  return file;
}

const WORDS_APP = `<endpoint-folder>
  <endpoint name="greet">
    <parameter name="words" pattern="${WORDS}"/>
    <success><response-body content-type="text/plain">hello \${words}</response-body></success>
  </endpoint>
</endpoint-folder>
`;

/** The binary with a hang guard: SIGKILL, since a blocked event loop runs no signal handler. */
const cli = (args: string[]) => execa('node', [BIN, ...args], { reject: false, timeout: 20_000, killSignal: 'SIGKILL' });

const get = (url: string) => fetch(url, { headers: { connection: 'close' } });

describe('a parameter pattern', () => {
  it('answers a value that backtracks for ever in RegExp with 400, and keeps serving', async () => {
    const service = await services.start(app(WORDS_APP), ['--workers', '2']);
    // As many as there are workers, and more: each one froze a worker before.
    const answers = await Promise.all([1, 2, 3].map(() => get(`${service.url}/greet?words=${HOSTILE}`)));
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      const problem = (await answer.json()) as { errors: { parameter: string; detail: string }[] };
      expect(problem.errors).toEqual([{ parameter: 'words', detail: expect.stringContaining('expected form') as string }]);
    }
    const fine = await get(`${service.url}/greet?words=${encodeURIComponent('big brave world')}`);
    expect(fine.status).toBe(200);
    expect(await fine.text()).toBe('hello big brave world');
    expect((await get(`${service.url}/_health`)).status).toBe(200);
  });

  const withDefault = (value: string) => `<endpoint-folder>
  <endpoint name="greet">
    <parameter name="words" default-value="${value}" pattern="${WORDS}"/>
  </endpoint>
</endpoint-folder>
`;

  it('checks such a default-value in validate: the located diagnostic, no hang', async () => {
    const file = app(withDefault(HOSTILE));
    const result = await cli(['validate', file, '--format', 'json']);
    expect(result.timedOut).toBe(false);
    expect(result.exitCode).toBe(1);
    const report = JSON.parse(result.stdout) as { diagnostics: { code: string; line: number; column: number }[] };
    expect(report.diagnostics.map((d) => [d.code, d.line, d.column])).toEqual([['invalid-default-value', 3, 29]]);
  });

  it('checks such a default-value in dry-run, no hang', async () => {
    const result = await cli(['dry-run', app(withDefault(HOSTILE))]);
    expect(result.timedOut).toBe(false);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('invalid-default-value');
  });

  it('refuses such a value simulated by dry-run --param, no hang', async () => {
    const result = await cli(['dry-run', app(withDefault('hello')), '--param', `words=${HOSTILE}`, '--format', 'json']);
    expect(result.timedOut).toBe(false);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('parameter "words" does not have the expected form');
  });
});

describe("an output's regex", () => {
  it('refuses a value that backtracks for ever in RegExp at once, and still extracts a matching one', async () => {
    const peer = await HttpPeer.start();
    peers.push(peer);
    peer.route('/hostile', { json: { name: HOSTILE } });
    peer.route('/fine', { json: { name: 'big brave world' } });
    const file = app(`<endpoint-folder>
  <endpoint name="lookup">
    <parameter name="which"/>
    <success>
      <after task-id="fetch"/>
      <input-intermediate-value name="customer"/>
      <response-body content-type="text/plain">\${customer}</response-body>
    </success>
    <task class="HttpRequest" id="fetch">
      <url>\${env:PEER}/\${which}</url>
      <output-intermediate-value name="customer" jsonpath="$.name" regex="${WORDS}"/>
    </task>
  </endpoint>
</endpoint-folder>
`);
    const service = await services.start(file, [], { PEER: peer.origin });
    const hostile = await get(`${service.url}/lookup?which=hostile`);
    expect(hostile.status).toBe(502);
    const failed = await service.waitForLog((l) => l.msg === 'task' && l.outcome === 'failed');
    expect(failed.error).toContain('does not match the regular expression');
    const fine = await get(`${service.url}/lookup?which=fine`);
    expect(fine.status).toBe(200);
    expect(await fine.text()).toBe('big brave world');
    expect(peer.requests.map((r) => r.path)).toEqual(['/hostile', '/fine']);
  });
});
