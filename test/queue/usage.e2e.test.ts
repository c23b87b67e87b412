// The queue's options are checked before anything starts: a missing or malformed key, a URL of
// another scheme, a worker without a queue and bad values are usage errors (exit 2), and the key
// itself is never echoed. No store is needed for these.
import { describe, expect, it } from 'vitest';
import { QUEUE_KEY, queueFixture, runCli } from '../helpers/queue.js';

const file = queueFixture('durable');
const env = { PEER: 'http://127.0.0.1:1' };
const serve = (args: string[], extra: Record<string, string | undefined> = {}) =>
  runCli(['serve', file, '--port', '0', '--workers', '1', '--smtp-url', 'smtp://127.0.0.1:1', ...args], { ...env, ...extra });

describe('queue options', () => {
  it('needs ENDPOINT_SERVICE_QUEUE_KEY with --queue, and says how to make one', async () => {
    const result = await serve(['--queue', 'redis://127.0.0.1:1'], { ENDPOINT_SERVICE_QUEUE_KEY: undefined });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/ENDPOINT_SERVICE_QUEUE_KEY/);
    expect(result.stderr).toMatch(/randomBytes\(32\)/);
  });

  it('refuses a key that is not 32 bytes, without echoing it', async () => {
    const result = await serve(['--queue', 'redis://127.0.0.1:1'], { ENDPOINT_SERVICE_QUEUE_KEY: 'c2hvcnQta2V5LXNlY3JldA==' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/32 bytes/);
    expect(result.stderr).not.toContain('c2hvcnQta2V5LXNlY3JldA');
  });

  it('refuses a URL of another scheme, from the option or the environment', async () => {
    const option = await serve(['--queue', 'amqp://127.0.0.1']);
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/--queue has the scheme "amqp"/);
    const fromEnv = await serve([], { ENDPOINT_SERVICE_QUEUE_URL: 'not a url' });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toMatch(/ENDPOINT_SERVICE_QUEUE_URL is not a URL/);
  });

  it('refuses bad values of the queue options', async () => {
    for (const args of [
      ['--queue-attempts', '0'],
      ['--queue-backoff', '30'],
      ['--queue-fallback', 'drop'],
      ['--on-config-change', 'latest'],
      ['--email-redelivery', 'twice'],
      ['--queue-name', 'a:b'],
    ]) {
      const result = await serve(['--queue', 'redis://127.0.0.1:1', ...args]);
      expect(result.code, args.join(' ')).toBe(2);
    }
  });

  it('refuses a --queue-retention without a unit, under a second or beyond ten years, on serve and on worker', async () => {
    const bare = await serve(['--queue', 'redis://127.0.0.1:1', '--queue-retention', '14']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/--queue-retention.*'14' is invalid\. expected a duration with a unit, such as 14d.*write 14d or 14h/);
    const short = await runCli(['worker', file, '--queue', 'redis://127.0.0.1:1', '--queue-retention', '500ms'], env);
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/at least 1s/);
    const long = await runCli(['worker', file, '--queue', 'redis://127.0.0.1:1', '--queue-retention', '5000d'], env);
    expect(long.code).toBe(2);
    expect(long.stderr).toMatch(/at most 3650d/);
  });

  it('worker needs a queue; a bad --concurrency is a usage error', async () => {
    const none = await runCli(['worker', file], { ...env, ENDPOINT_SERVICE_QUEUE_URL: undefined });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/worker needs --queue/);
    const bad = await runCli(['worker', file, '--queue', 'redis://127.0.0.1:1', '--concurrency', '0'], env);
    expect(bad.code).toBe(2);
  });

  it('starts with a well-formed key in hex as well as base64 (the store may be down: it is retried)', async () => {
    const hex = Buffer.from(QUEUE_KEY, 'base64').toString('hex');
    const { spawn } = await import('node:child_process');
    const { ROOT } = await import('../helpers/serve.js');
    const child = spawn(
      process.execPath,
      [
        'bin/endpoint-service.js',
        'serve',
        file,
        '--port',
        '0',
        '--workers',
        '1',
        '--smtp-url',
        'smtp://127.0.0.1:1',
        '--queue',
        'redis://127.0.0.1:1',
        '--log-format',
        'json',
      ],
      {
        cwd: ROOT,
        env: { ...process.env, ...env, ENDPOINT_SERVICE_QUEUE_KEY: hex },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    while (!out.includes('listening on') && child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
    expect(out).toMatch(/listening on/);
    while (!err.includes('unreachable') && child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
    const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(err).toMatch(/"the queue store is unreachable; retrying"/);
  });
});

describe('help on the key', () => {
  /** `--help` of ARGS, on one line: commander wraps descriptions at the terminal's width. */
  const help = async (args: string[]) => {
    const result = await runCli([...args, '--help'], { COLUMNS: '80' });
    expect(result.code).toBe(0);
    return result.stdout.replace(/\s+/g, ' ');
  };
  /** The description of one option: from its name to the next option. */
  const option = (text: string, name: string) => new RegExp(`${name.replace(/[-]/g, '\\-')} .*?(?= --|$)`).exec(text)?.[0] ?? '';

  it.each(['list', 'retry', 'discard'])('jobs %s does not say it needs ENDPOINT_SERVICE_QUEUE_KEY (it reads only what is stored in clear)', async (sub) => {
    const text = await help(['jobs', sub]);
    expect(option(text, '--queue <url>')).toMatch(/ENDPOINT_SERVICE_QUEUE_URL/);
    expect(text).not.toMatch(/needs ENDPOINT_SERVICE_QUEUE_KEY/);
  });

  it('jobs show says only --reveal needs ENDPOINT_SERVICE_QUEUE_KEY', async () => {
    const text = await help(['jobs', 'show']);
    expect(option(text, '--queue <url>')).not.toMatch(/ENDPOINT_SERVICE_QUEUE_KEY/);
    expect(option(text, '--reveal')).toMatch(/needs ENDPOINT_SERVICE_QUEUE_KEY/);
  });

  it('serve and worker say --queue needs ENDPOINT_SERVICE_QUEUE_KEY (they seal and open the jobs)', async () => {
    for (const command of ['serve', 'worker']) expect(option(await help([command]), '--queue <url>'), command).toMatch(/needs ENDPOINT_SERVICE_QUEUE_KEY/);
  });
});
