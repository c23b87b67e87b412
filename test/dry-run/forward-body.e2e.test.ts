// dry-run and <forward-request-body/>: the plan shows a forwarded body as its size and content
// type (never its bytes), in text and JSON; an endpoint that forwards takes a --body of any
// type, as serve takes any request body there.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dryRun } from './run.js';

const RAW = fileURLToPath(new URL('../../fixtures/serve/raw-body/endpoints.xml', import.meta.url));
const ENV = { PEER: 'http://127.0.0.1:9' };
const BODY = '{\n  "text": "Grüße"\n}\n';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dry-run-forward-'));
  writeFileSync(join(dir, 'delivery.json'), BODY);
  writeFileSync(join(dir, 'note.txt'), 'plain text');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a forwarded body in the plan', () => {
  it('text: its size and content type, not its bytes', async () => {
    const run = await dryRun([RAW, '--endpoint', 'relay', '--body', 'delivery.json'], ENV, dir);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('      content-type: application/json\n');
    expect(run.stdout).toContain(`      the request body, forwarded as received: ${Buffer.byteLength(BODY)} bytes, application/json\n`);
    expect(run.stdout).not.toContain('Grüße');
  });

  it('json: the request body member says it is forwarded, with its size and type', async () => {
    const run = await dryRun(
      [RAW, '--endpoint', 'relay', '--body', 'delivery.json', '--content-type', 'application/json; charset=utf-8', '--format', 'json'],
      ENV,
      dir,
    );
    expect(run.exitCode).toBe(0);
    const request = (JSON.parse(run.stdout) as { endpoints: { tasks: { request: { headers: Record<string, string>; body: unknown } }[] }[] }).endpoints[0]!
      .tasks[0]!.request;
    expect(request.body).toEqual({ forwarded: 'request-body', size: Buffer.byteLength(BODY), contentType: 'application/json; charset=utf-8' });
    expect(request.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('without --body: only that the body is forwarded', async () => {
    const text = await dryRun([RAW, '--endpoint', 'relay', '--param', 'x=1'], ENV, dir);
    expect(text.stdout).toContain('      the request body, forwarded as received: its bytes and Content-Type\n');
    const json = await dryRun([RAW, '--endpoint', 'relay', '--param', 'x=1', '--format', 'json'], ENV, dir);
    expect((JSON.parse(json.stdout) as { endpoints: { tasks: { request: { body: unknown } }[] }[] }).endpoints[0]!.tasks[0]!.request.body).toEqual({
      forwarded: 'request-body',
    });
  });

  it('takes a --body of a type no parameter is read from, as serve does for such an endpoint', async () => {
    const run = await dryRun([RAW, '--endpoint', 'relay', '--body', 'note.txt', '--content-type', 'text/plain'], ENV, dir);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('the request body, forwarded as received: 10 bytes, text/plain\n');
  });

  it('an endpoint that does not forward still refuses that type (415), as serve does', async () => {
    const run = await dryRun([RAW, '--endpoint', 'plain', '--body', 'note.txt', '--content-type', 'text/plain'], ENV, dir);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('status 415');
  });
});
