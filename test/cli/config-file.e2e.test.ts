// What validate, dry-run and serve accept as a configuration file: a regular file of at most
// 64 MiB. A named pipe nobody writes to used to block them for ever, /dev/zero to be read until
// memory ran out; both, and a file over the limit, are now "cannot read" (exit 2) with a clear
// message. A settings file beside endpoints.xml gets the same rule as a located diagnostic.
// `timeout` is a hang guard only.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CONFIGURATION_FILE_BYTES } from '../../src/compiler/read-file.js';

const BIN = fileURLToPath(new URL('../../bin/endpoint-service.js', import.meta.url));
const HANG_GUARD = 20_000;
const VALID = `<?xml version="1.0" encoding="UTF-8"?>
<endpoint-folder>
  <endpoint name="hello"><success><response-body content-type="text/plain">hi</response-body></success></endpoint>
</endpoint-folder>
`;

let dir: string;
let fifo: string;
let huge: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'es-config-file-'));
  fifo = path.join(dir, 'pipe.xml');
  execFileSync('mkfifo', [fifo]);
  // Sparse: one byte over the limit without writing 64 MiB.
  huge = path.join(dir, 'huge.xml');
  writeFileSync(huge, VALID);
  truncateSync(huge, MAX_CONFIGURATION_FILE_BYTES + 1);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const COMMANDS: Record<string, (file: string) => string[]> = {
  validate: (file) => ['validate', file],
  'dry-run': (file) => ['dry-run', file],
  serve: (file) => ['serve', file, '--port', '0', '--workers', '1'],
};

function run(args: string[]) {
  return execa('node', [BIN, ...args], { reject: false, timeout: HANG_GUARD, env: { NO_COLOR: '1' } });
}

describe.each(Object.keys(COMMANDS))('%s', (command) => {
  const args = COMMANDS[command]!;

  it('a named pipe: exit 2 at once, "not a regular file", nothing read', async () => {
    const r = await run(args(fifo));
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(`${r.stdout}${r.stderr}`).toContain(`Cannot read ${fifo}: it is a named pipe (FIFO), not a regular file.`);
  });

  it('/dev/zero: exit 2 at once, "not a regular file"', async () => {
    const r = await run(args('/dev/zero'));
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(`${r.stdout}${r.stderr}`).toContain('Cannot read /dev/zero: it is a character device, not a regular file.');
  });

  it('a file one byte over 64 MiB: exit 2, naming its size and the limit', async () => {
    const r = await run(args(huge));
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(`${r.stdout}${r.stderr}`).toContain(`Cannot read ${huge}: it is 64.0 MiB; a configuration file may hold at most 64 MiB.`);
  });
});

describe('a settings file beside endpoints.xml', () => {
  it('security.xml as a named pipe: a located file-unreadable error (exit 1), no hang', async () => {
    const app = mkdtempSync(path.join(dir, 'app-'));
    writeFileSync(path.join(app, 'endpoints.xml'), VALID);
    execFileSync('mkfifo', [path.join(app, 'security.xml')]);
    const r = await run(['validate', path.join(app, 'endpoints.xml')]);
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(1);
    expect(`${r.stdout}${r.stderr}`).toMatch(/security\.xml:1:1 +error +file-unreadable +Cannot read .*security\.xml: it is a named pipe \(FIFO\), not a regular file\./);
  });
});
