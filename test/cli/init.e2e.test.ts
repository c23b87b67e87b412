// `endpoint-service init [dir]` through the built binary (README, "Start a new application"):
// what it writes validates with no error, by validate and by the schemas it copies, serves, and
// the three commands it prints run as printed, in a shell, where init was run (through npx, from
// a clone's bin/, or from PATH); a folder that holds anything is refused with exit 2 and left as
// it was.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { validateXML } from 'xmllint-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPeer } from '../helpers/http-peer.js';
import { startServe } from '../helpers/serve.js';
import { SmtpPeer } from '../helpers/smtp-peer.js';
import { assertBuilt, bin, childEnv, removeDir, repoRoot, run, STACK_TRACE, tempApp } from './helpers.js';

/** Not under npm (npx, npm test and npm scripts set npm_command), and no endpoint-service on PATH. */
const PLAIN_SHELL = { npm_command: undefined, PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter) };
/** As `npx endpoint-service` runs it. */
const UNDER_NPX = { npm_command: 'exec' };

const scratch: string[] = [];
const freshDir = () => {
  const dir = tempApp({});
  scratch.push(dir);
  return dir;
};
afterAll(() => scratch.forEach(removeDir));

/** Every file below `dir`, relative, sorted. */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/** The printed "Next:" commands: leading NAME=value words set variables, then the command (`endpoint-service`, `npx endpoint-service` or a path to it) and its arguments. */
function nextCommands(stdout: string): { line: string; env: Record<string, string>; command: string; args: string[] }[] {
  const lines = stdout
    .slice(stdout.indexOf('\nNext:\n') + 7)
    .trimEnd()
    .split('\n');
  return lines.map((line) => {
    const words = line.trim().split(/\s+/);
    const env: Record<string, string> = {};
    while (/^[A-Z_]+=/.test(words[0]!)) {
      const [name, value] = words.shift()!.split('=') as [string, string];
      env[name] = value;
    }
    const end = words.findIndex((w) => /(^|\/)endpoint-service(\.js)?$/.test(w));
    expect(end, line).toBeGreaterThanOrEqual(0);
    return { line: line.trim(), env, command: words.slice(0, end + 1).join(' '), args: words.slice(end + 1) };
  });
}

/** Runs a printed line in a POSIX shell, as the person would paste it. */
function inShell(line: string, cwd: string, env: Record<string, string | undefined>) {
  return execa('sh', ['-c', line], { cwd, env: childEnv(env), extendEnv: false, reject: false, timeout: 20_000 });
}

/** Starts a printed serve line in a shell (on a free port) until it says it listens; then stops the whole process group. */
async function serveInShell(line: string, cwd: string, env: Record<string, string | undefined>): Promise<string> {
  const child = spawn('sh', ['-c', line], { cwd, env: childEnv({ ...env, PORT: '0' }), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  try {
    return await new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        out += c;
        const ready = /listening on (\S+)/.exec(out);
        if (ready) resolve(ready[1]!);
      });
      child.once('exit', (code) => reject(new Error(`${line} exited with ${code}: ${err}`)));
    });
  } finally {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
  }
}

describe('init into a new folder', () => {
  let cwd: string;
  let stdout: string;

  beforeAll(async () => {
    assertBuilt();
    cwd = freshDir();
    const r = await run(['init', 'demo'], { cwd, env: UNDER_NPX });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    stdout = r.stdout;
  });

  it('writes the application, its settings and the schemas for editors', () => {
    expect(tree(path.join(cwd, 'demo'))).toEqual([
      'email-sending-configuration.xml',
      'endpoints.xml',
      'schema/email-sending-configuration.xsd',
      'schema/endpoints.xsd',
      'schema/security.xsd',
    ]);
    const endpoints = readFileSync(path.join(cwd, 'demo/endpoints.xml'), 'utf8');
    expect(endpoints).toContain('xsi:noNamespaceSchemaLocation="schema/endpoints.xsd"');
    expect(endpoints).toMatch(/<parameter name="email" format="email"\/>/);
    expect(endpoints).toMatch(/<parameter name="message" default-value="" max-length="5000"\/>/);
    expect(endpoints).toContain('class="HttpRequest"');
    expect(endpoints).toContain('class="Email"');
    expect(readFileSync(path.join(cwd, 'demo/email-sending-configuration.xml'), 'utf8')).toContain('${env:SMTP_HOST}');
  });

  it('prints what the README shows (run through npx, it prints npx commands)', () => {
    const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    const shown = /\$ npx endpoint-service init demo\n([\s\S]*?)```/.exec(readme)![1]!;
    expect(stdout).toBe(shown);
  });

  it('prints the next three commands: validate, dry-run, serve', () => {
    expect(nextCommands(stdout).map((c) => c.args[0])).toEqual(['validate', 'dry-run', 'serve']);
    for (const c of nextCommands(stdout)) expect(c.args.at(-1)).toBe('demo/endpoints.xml');
  });

  it('validate, as printed: 0 errors (the one warning is the variable to set where it runs)', async () => {
    const [validate] = nextCommands(stdout);
    const r = await run(validate!.args, { cwd, env: validate!.env });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('0 errors, 1 warning');
    expect(r.stdout).toContain('env-not-set');
    const set = await run(validate!.args, { cwd, env: { SMTP_HOST: 'localhost' } });
    expect(set.stdout).toBe('0 errors, 0 warnings\n');
  });

  it('dry-run, as printed: the plan of a simulated request, exit 0', async () => {
    const [, dryRun] = nextCommands(stdout);
    const r = await run(dryRun!.args, { cwd, env: dryRun!.env });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('[runs] save-contact  HttpRequest');
    expect(r.stdout).toContain('Subject: Contact from Ann');
  });

  it('serve, as printed: it starts and answers (tasks refused any host here, so nothing leaves the machine)', async () => {
    const [, , serve] = nextCommands(stdout);
    expect(serve!.env).toEqual({ SMTP_HOST: 'localhost' });
    const file = path.join(cwd, serve!.args.at(-1)!);
    const service = await startServe(file, ['--allow-task-host', '127.0.0.1'], serve!.env);
    try {
      const ok = await fetch(`${service.url}/contact?name=Ann&email=ann@example.com`);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ received: true, request: ok.headers.get('x-request-id') });
      const missing = await fetch(`${service.url}/contact?name=Ann`);
      expect(missing.status).toBe(400);
      expect(await missing.text()).toContain('email');
    } finally {
      await service.stop();
    }
  });

  it('serve --smtp-url (or ENDPOINT_SERVICE_SMTP_URL), SMTP_HOST unset: it starts and sends through that server (the option replaces the connection settings)', async () => {
    const crm = await HttpPeer.start();
    const smtp = await SmtpPeer.start();
    crm.route('/api/contacts', { json: { id: 1 } });
    const app = freshDir();
    await run(['init', 'demo'], { cwd: app });
    const file = path.join(app, 'demo/endpoints.xml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('https://crm.example.com/api/contacts', crm.url('/api/contacts')));
    try {
      for (const [args, env] of [
        [['--smtp-url', `smtp://127.0.0.1:${smtp.port}`], { SMTP_HOST: undefined }],
        [[], { SMTP_HOST: undefined, ENDPOINT_SERVICE_SMTP_URL: `smtp://127.0.0.1:${smtp.port}` }],
      ] as const) {
        const service = await startServe(file, ['--allow-task-host', '127.0.0.1', ...args], env);
        try {
          const sent = smtp.messages.length;
          const ok = await fetch(`${service.url}/contact?name=Ann&email=ann@example.com`);
          expect(ok.status).toBe(200);
          await smtp.waitForMessages(sent + 1);
          expect(smtp.messages.at(-1)!.parsed.subject).toBe('Contact from Ann');
          expect(service.stderr()).not.toContain('SMTP_HOST');
        } finally {
          await service.stop();
        }
      }
    } finally {
      await crm.close();
      await smtp.close();
    }
  });

  it('serve without --smtp-url still needs SMTP_HOST: exit 1 naming it', async () => {
    const r = await run(['serve', '--port', '0', 'demo/endpoints.xml'], { cwd, env: { SMTP_HOST: undefined, ENDPOINT_SERVICE_SMTP_URL: undefined } });
    expect(r.exitCode).toBe(1);
    expect(r.stdout + r.stderr).toContain('SMTP_HOST is not set');
  });

  it('what it writes validates against the schemas it names', async () => {
    for (const [file, schema] of [
      ['endpoints.xml', 'schema/endpoints.xsd'],
      ['email-sending-configuration.xml', 'schema/email-sending-configuration.xsd'],
    ] as const) {
      const result = await validateXML({
        xml: [{ fileName: file, contents: readFileSync(path.join(cwd, 'demo', file), 'utf8') }],
        schema: [readFileSync(path.join(cwd, 'demo', schema), 'utf8')],
      });
      expect(
        result.errors.map((e) => e.rawMessage),
        file,
      ).toEqual([]);
    }
  });

  it('copies the schemas of the package unchanged', () => {
    for (const name of ['endpoints.xsd', 'email-sending-configuration.xsd', 'security.xsd']) {
      expect(readFileSync(path.join(cwd, 'demo/schema', name), 'utf8')).toBe(readFileSync(path.join(repoRoot, 'schema', name), 'utf8'));
    }
  });
});

describe('init demo in the clone', () => {
  it('leaves git status clean: demo/ is ignored (README, "Start a new application")', async () => {
    const inside = await execa('git', ['rev-parse', '--is-inside-work-tree'], { cwd: repoRoot, reject: false });
    if (inside.exitCode !== 0) return;
    const ignored = await execa('git', ['check-ignore', 'demo/endpoints.xml', 'demo/schema/endpoints.xsd'], { cwd: repoRoot, reject: false });
    expect(ignored.exitCode).toBe(0);
  });
});

describe('init elsewhere', () => {
  it('writes into the current folder without an argument, and prints paths from there', async () => {
    const cwd = freshDir();
    const r = await run(['init'], { cwd });
    expect(r.exitCode).toBe(0);
    expect(tree(cwd)).toContain('endpoints.xml');
    expect(nextCommands(r.stdout)[0]!.args).toEqual(['validate', 'endpoints.xml']);
    expect((await run(['validate', 'endpoints.xml'], { cwd, env: { SMTP_HOST: 'localhost' } })).stdout).toBe('0 errors, 0 warnings\n');
  });

  it('writes into an empty folder that exists, and into new nested folders', async () => {
    const cwd = freshDir();
    mkdirSync(path.join(cwd, 'empty'));
    expect((await run(['init', 'empty'], { cwd })).exitCode).toBe(0);
    expect((await run(['init', 'a/b/c'], { cwd })).exitCode).toBe(0);
    expect(tree(path.join(cwd, 'a/b/c'))).toContain('endpoints.xml');
  });

  it('quotes a path with a space in the commands it prints', async () => {
    const cwd = freshDir();
    const r = await run(['init', 'my app'], { cwd });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(" validate 'my app/endpoints.xml'\n");
  });
});

describe('the printed commands run in a shell where init was run', () => {
  /** Runs validate and dry-run as printed, and serve until it listens, in `cwd` with `env`. */
  async function expectEachToRun(stdout: string, cwd: string, env: Record<string, string | undefined>): Promise<void> {
    const [validate, dryRun, serve] = nextCommands(stdout);
    const checked = await inShell(validate!.line, cwd, env);
    expect(checked.stderr).toBe('');
    expect(checked.exitCode, validate!.line).toBe(0);
    expect(checked.stdout).toContain('0 errors');
    const planned = await inShell(dryRun!.line, cwd, env);
    expect(planned.exitCode, dryRun!.line).toBe(0);
    expect(planned.stdout).toContain('Subject: Contact from Ann');
    expect(await serveInShell(`${serve!.line} --allow-task-host 127.0.0.1`, cwd, env)).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  }

  it('from a clone, as ./bin/endpoint-service.js init: the same path, which a shell runs (the bare name is not on PATH there)', async () => {
    const r = await run(['init', path.join(freshDir(), 'demo')], { cwd: repoRoot, env: PLAIN_SHELL });
    expect(r.exitCode).toBe(0);
    await expectEachToRun(r.stdout, repoRoot, PLAIN_SHELL);
    expect(nextCommands(r.stdout).map((c) => c.command)).toEqual(Array(3).fill('./bin/endpoint-service.js'));
  });

  it('from another folder, by the path of the script: that path', async () => {
    const cwd = freshDir();
    const r = await run(['init', 'demo'], { cwd, env: PLAIN_SHELL });
    expect(nextCommands(r.stdout)[0]!.command).toBe(bin);
    await expectEachToRun(r.stdout, cwd, PLAIN_SHELL);
  });

  it('through npx (npm exec, an npm script): npx endpoint-service, since npm puts the name on PATH for its child only', async () => {
    const r = await run(['init', 'demo'], { cwd: freshDir(), env: UNDER_NPX });
    expect(nextCommands(r.stdout).map((c) => c.command)).toEqual(Array(3).fill('npx endpoint-service'));
  });

  it('from PATH (npm link, npm install --global .): the bare name', async () => {
    const cwd = freshDir();
    mkdirSync(path.join(cwd, 'bin'));
    symlinkSync(bin, path.join(cwd, 'bin/endpoint-service'));
    const env = { ...PLAIN_SHELL, PATH: `${path.join(cwd, 'bin')}${path.delimiter}${PLAIN_SHELL.PATH}` };
    const r = await inShell('endpoint-service init demo', cwd, env);
    expect(r.exitCode).toBe(0);
    expect(nextCommands(r.stdout).map((c) => c.command)).toEqual(Array(3).fill('endpoint-service'));
    await expectEachToRun(r.stdout, cwd, env);
  });
});

describe('init refuses, writing nothing', () => {
  it('a folder with a file in it: exit 2, the folder as it was', async () => {
    const cwd = freshDir();
    mkdirSync(path.join(cwd, 'demo'));
    writeFileSync(path.join(cwd, 'demo/endpoints.xml'), '<endpoint-folder/>\n');
    writeFileSync(path.join(cwd, 'demo/notes.txt'), 'mine\n');
    const r = await run(['init', 'demo'], { cwd });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/demo is not empty \(it holds endpoints\.xml, notes\.txt\).*nothing was written/);
    expect(r.stderr).not.toMatch(STACK_TRACE);
    expect(tree(path.join(cwd, 'demo'))).toEqual(['endpoints.xml', 'notes.txt']);
    expect(readFileSync(path.join(cwd, 'demo/endpoints.xml'), 'utf8')).toBe('<endpoint-folder/>\n');
  });

  it('a folder holding only a subfolder or a hidden file', async () => {
    const cwd = freshDir();
    mkdirSync(path.join(cwd, 'a/static'), { recursive: true });
    writeFileSync(path.join(cwd, 'b'), '');
    mkdirSync(path.join(cwd, 'c'));
    writeFileSync(path.join(cwd, 'c/.env'), 'X=1\n');
    for (const dir of ['a', 'c']) expect((await run(['init', dir], { cwd })).exitCode, dir).toBe(2);
    expect(readdirSync(path.join(cwd, 'a'))).toEqual(['static']);
    expect(readdirSync(path.join(cwd, 'c'))).toEqual(['.env']);
  });

  it('a path that is a file: exit 2', async () => {
    const cwd = freshDir();
    writeFileSync(path.join(cwd, 'taken'), 'x');
    const r = await run(['init', 'taken'], { cwd });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('taken is a file, not a folder');
    expect(readFileSync(path.join(cwd, 'taken'), 'utf8')).toBe('x');
  });

  it('a folder that cannot be made (a file stands in its path): exit 2', async () => {
    const cwd = freshDir();
    writeFileSync(path.join(cwd, 'taken'), 'x');
    const r = await run(['init', 'taken/demo'], { cwd });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/cannot (read|write into) taken\/demo/);
    expect(readdirSync(cwd)).toEqual(['taken']);
  });

  it('two folders: a usage error, exit 2', async () => {
    const cwd = freshDir();
    const r = await run(['init', 'a', 'b'], { cwd });
    expect(r.exitCode).toBe(2);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it.runIf(process.platform === 'linux' && process.getuid?.() !== 0)('a folder it cannot write into: exit 2, nothing left behind', async () => {
    const cwd = freshDir();
    mkdirSync(path.join(cwd, 'locked'), { mode: 0o500 });
    const r = await run(['init', 'locked/demo'], { cwd });
    expect(r.exitCode).toBe(2);
    expect(readdirSync(path.join(cwd, 'locked'))).toEqual([]);
  });
});
