// What `serve --queue` and `worker` check when they start, through the binary: SMTP settings are
// required only of a process that can send mail (one that runs Email tasks: a worker or a serve
// that consumes, for background endpoints; any serve, for endpoints whose tasks run where the
// request is answered), and a queue that no endpoint uses is worth a warning. No store is needed:
// the processes start against a closed port and keep retrying it.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_KEY, queueFixture, runCli, startWorker, uniqueQueueName, type RunningWorker } from '../helpers/queue.js';
import { ROOT, runServeToExit, StartedServices } from '../helpers/serve.js';
import { closedPort } from '../helpers/smtp-peer.js';

/** Email only in a tasks="background" endpoint; no SMTP settings. */
const MAIL_IN_BACKGROUND = queueFixture('basic');
/** Email in an endpoint whose tasks run in-process; a background endpoint without mail; no SMTP settings. */
const MAIL_IN_PROCESS = queueFixture('mail-in-process');
/** The README's example: no tasks="background" endpoint at all (SMTP settings in its folder). */
const NO_BACKGROUND = path.join(ROOT, 'fixtures/contact-form/endpoints.xml');

const ENV = { PEER: 'http://127.0.0.1:1', CRM_KEY: 'k', CRM_API_KEY: 'k', ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY, ENDPOINT_SERVICE_SMTP_URL: undefined };
const NO_NEWLINES = (s: string) => s.replace(/\s+/g, ' ');
const noBackgroundWarning = (l: Record<string, unknown>) => l.level === 'warn' && String(l.msg).includes('no endpoint has tasks="background"');

let store: string;
const services = new StartedServices();
const workers: RunningWorker[] = [];
beforeAll(async () => {
  store = `redis://127.0.0.1:${await closedPort()}`;
});
afterAll(async () => {
  await services.stopAll();
  await Promise.all(workers.map((w) => w.stop('SIGKILL')));
});

const queueArgs = (...more: string[]) => ['--queue', store, '--queue-name', uniqueQueueName('start'), ...more];
const worker = (file: string) => {
  const started = startWorker(file, store, uniqueQueueName('start'), [], ENV);
  workers.push(started);
  return started;
};

describe('SMTP settings, only where mail can be sent', () => {
  it('serve --queue --no-queue-consume starts without them when every Email task is in a tasks="background" endpoint', async () => {
    const service = await services.start(MAIL_IN_BACKGROUND, queueArgs('--no-queue-consume'), ENV);
    expect(service.stderr()).not.toContain('smtp-not-configured');
  });

  it('serve --queue that also consumes the jobs needs them (it sends the mail)', async () => {
    const result = await runServeToExit(MAIL_IN_BACKGROUND, ['--port', '0', '--workers', '1', ...queueArgs()], ENV);
    expect(result.code).toBe(1);
    expect(NO_NEWLINES(result.stderr)).toMatch(/error +smtp-not-configured/);
  });

  it('serve --queue --no-queue-consume --queue-fallback in-process needs them (a refused job runs here)', async () => {
    const result = await runServeToExit(MAIL_IN_BACKGROUND, ['--port', '0', '--workers', '1', ...queueArgs('--no-queue-consume', '--queue-fallback', 'in-process')], ENV);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('smtp-not-configured');
  });

  it('serve --queue --no-queue-consume needs them for an Email task of an endpoint that is not background', async () => {
    const result = await runServeToExit(MAIL_IN_PROCESS, ['--port', '0', '--workers', '1', ...queueArgs('--no-queue-consume')], ENV);
    expect(result.code).toBe(1);
    // Located at the Email task of the in-process endpoint.
    expect(result.stderr).toMatch(/endpoints\.xml:8:5 +error +smtp-not-configured/);
  });

  it('worker needs them when a background endpoint sends mail', async () => {
    const result = await runCli(['worker', MAIL_IN_BACKGROUND, '--port', '0', ...queueArgs()], ENV);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('smtp-not-configured');
  });

  it('worker starts without them when only endpoints it never runs (not background) send mail', async () => {
    const started = worker(MAIL_IN_PROCESS);
    await started.origin;
    expect(started.stderr()).not.toContain('smtp-not-configured');
  });
});

describe('a queue no endpoint uses', () => {
  it('serve --queue on an application without tasks="background" warns at start that nothing is queued', async () => {
    const service = await services.start(NO_BACKGROUND, queueArgs('--no-queue-consume'), ENV);
    const warning = await service.waitForLog(noBackgroundWarning);
    expect(String(warning.msg)).toMatch(/nothing is queued/);
  });

  it('worker on an application without tasks="background" warns at start that it has nothing to run', async () => {
    const started = worker(NO_BACKGROUND);
    const warning = await started.waitForLog(noBackgroundWarning);
    expect(String(warning.msg)).toMatch(/no jobs/);
  });

  it('says nothing of it when an endpoint is background', async () => {
    const service = await services.start(MAIL_IN_PROCESS, [...queueArgs(), '--smtp-url', 'smtp://127.0.0.1:1'], ENV);
    // The store's unreachability is logged once the consumer has tried it: start-up is over by then.
    await service.waitForLog((l) => String(l.msg).includes('unreachable'));
    expect(service.logs().filter(noBackgroundWarning)).toEqual([]);
  });
});
