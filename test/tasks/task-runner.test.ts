import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Endpoint, OutputIntermediateValue, Task } from '../../src/compiler/ast.js';
import { TaskEngine } from '../../src/runtime/task-runner.js';
import { TASK_KINDS } from '../../src/tasks/registry.js';
import { DEFAULT_TASK_SETTINGS } from '../../src/tasks/settings.js';
import { RequestUploads } from '../../src/upload.js';
import { HttpPeer } from '../helpers/http-peer.js';
import { closedPort, SmtpPeer } from '../helpers/smtp-peer.js';
import { application, emailTask, endpoint, equals, httpTask, RecordingObserver, regex as compiled, scope, selector } from './builders.js';

let http: HttpPeer;
let smtp: SmtpPeer;
let observer: RecordingObserver;
const open: TaskEngine[] = [];

beforeAll(async () => {
  http = await HttpPeer.start();
  smtp = await SmtpPeer.start({ refuseRecipients: ['nobody@example.com'] });
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await http.close();
  await smtp.close();
});

function run(ep: Endpoint, parameters: Record<string, string> = {}, smtpUrl: string = smtp.url) {
  observer = new RecordingObserver();
  const services = new TaskEngine(
    TASK_KINDS,
    { application: application([ep]), env: {}, settings: { ...DEFAULT_TASK_SETTINGS, email: { smtpUrl } }, warn: () => {} },
    observer,
  );
  open.push(services);
  return services.start({ endpoint: ep, scope: scope(parameters), uploads: RequestUploads.NONE, requestId: 'req-1' });
}

const out = (name: string, kind: 'jsonpath' | 'xpath', path: string, regex: string | null = null): OutputIntermediateValue => ({
  name,
  selector: selector(kind, path),
  regex: regex === null ? null : compiled(regex),
});

let n = 0;
/** A fresh path per test, so requests of earlier tests never mix in. */
const path = (name: string) => `/${name}-${++n}`;

describe('scheduling', () => {
  it('starts a task only after the task it comes after has ended', async () => {
    const a = path('a');
    const b = path('b');
    http.route(a, { body: 'a' }).route(b, { body: 'b' });
    // b is listed first: order comes from <after>, not from file order.
    const tasks: Task[] = [httpTask('b', http.url(b), { after: ['a'] }), httpTask('a', http.url(a))];
    const { result, settled } = run(endpoint(tasks));
    expect(await result).toEqual({ ok: true, intermediate: new Map() });
    await settled;
    const [ra] = http.requestsTo(a);
    const [rb] = http.requestsTo(b);
    expect(rb!.startedAt).toBeGreaterThan(ra!.endedAt!);
    expect(observer.events.map((e) => [e.taskId, e.outcome])).toEqual([
      ['a', 'succeeded'],
      ['b', 'succeeded'],
    ]);
  });

  it('runs independent tasks concurrently', async () => {
    const paths = [path('x'), path('y'), path('z')];
    // Each answer is held until all three requests have arrived: run one after the other,
    // the first would wait for ever and the test would time out.
    const allThere = () => Promise.all(paths.map((p) => http.waitForRequests(1, p))).then(() => undefined);
    for (const p of paths) http.route(p, { body: 'ok', hold: allThere });
    const { result } = run(endpoint(paths.map((p, i) => httpTask(`t${i}`, http.url(p)))));
    expect((await result).ok).toBe(true);
    const recs = paths.map((p) => http.requestsTo(p)[0]!);
    const lastStart = Math.max(...recs.map((r) => r.startedAt));
    const firstEnd = Math.min(...recs.map((r) => r.endedAt!));
    expect(lastStart).toBeLessThan(firstEnd);
  });

  it('passes values from a JSON answer and an XML answer (with regex) to later tasks', async () => {
    const customer = path('customer');
    const order = path('order');
    const use = path('use');
    http.route(customer, { json: { data: { id: 'c-42' } } });
    http.route(order, { headers: { 'content-type': 'application/xml' }, body: '<order><no>O-0097</no></order>' });
    http.route(use, { body: 'done' });
    const tasks: Task[] = [
      httpTask('use', http.url(use) + '?customer=${customer-id}&order=${order-no}', { inputs: ['customer-id', 'order-no'] }),
      httpTask('customer', http.url(customer), { outputs: [out('customer-id', 'jsonpath', '$.data.id')] }),
      httpTask('order', http.url(order), { outputs: [out('order-no', 'xpath', '/order/no', 'O-\\d+')] }),
    ];
    const outcome = await run(endpoint(tasks)).result;
    expect(outcome).toEqual({
      ok: true,
      intermediate: new Map([
        ['customer-id', 'c-42'],
        ['order-no', 'O-0097'],
      ]),
    });
    const used = http.requestsTo(use)[0]!;
    expect(used.query.get('customer')).toBe('c-42');
    expect(used.query.get('order')).toBe('O-0097');
    expect(used.startedAt).toBeGreaterThan(http.requestsTo(customer)[0]!.endedAt!);
    expect(used.startedAt).toBeGreaterThan(http.requestsTo(order)[0]!.endedAt!);
  });

  it('evaluates a condition with the task inputs when it becomes runnable, and skipped tasks release their dependants', async () => {
    const status = path('status');
    const alert = path('alert');
    const last = path('last');
    http
      .route(status, { json: { state: 'green' } })
      .route(alert, { body: '' })
      .route(last, { body: '' });
    const tasks: Task[] = [
      httpTask('status', http.url(status), { outputs: [out('state', 'jsonpath', '$.state')] }),
      httpTask('alert', http.url(alert), { inputs: ['state'], condition: equals('${state}', 'red', ['state']) }),
      httpTask('last', http.url(last), { after: ['alert'] }),
    ];
    const { result } = run(endpoint(tasks));
    expect((await result).ok).toBe(true);
    expect(http.requestsTo(alert)).toHaveLength(0);
    expect(http.requestsTo(last)).toHaveLength(1);
    expect(observer.outcome('alert')).toMatchObject({ outcome: 'skipped', attempts: 0 });
  });

  it('reports every task exactly once with kind, attempts and duration', async () => {
    const p = path('p');
    http.route(p, { status: 503 }, { status: 200 });
    const tasks: Task[] = [httpTask('call', http.url(p), { retries: 1 }), emailTask('mail', { after: ['call'] })];
    const { result, settled } = run(endpoint(tasks));
    expect((await result).ok).toBe(true);
    await settled;
    expect(observer.events).toHaveLength(2);
    expect(observer.outcome('call')).toMatchObject({ kind: 'http-request', outcome: 'succeeded', attempts: 2, requestId: 'req-1', endpoint: 'test' });
    expect(observer.outcome('mail')).toMatchObject({ kind: 'email', outcome: 'succeeded', attempts: 1 });
    for (const e of observer.events) expect(e.durationMs).toBeGreaterThanOrEqual(0);
  });
});

describe('failures', () => {
  it('answers ok:false at the first counting failure, starts nothing more, sends no email and lets running tasks finish', async () => {
    const bad = path('bad');
    const slow = path('slow');
    const later = path('later');
    let releaseSlow!: () => void;
    const slowHeld = new Promise<void>((r) => (releaseSlow = r));
    http
      .route(bad, { status: 400, body: 'no' })
      .route(slow, { body: 'slow', hold: () => slowHeld })
      .route(later, { body: '' });
    const before = smtp.messages.length;
    const tasks: Task[] = [
      emailTask('mail', { toSources: ['ada@example.com'] }),
      httpTask('bad', http.url(bad)),
      httpTask('slow', http.url(slow)),
      httpTask('later', http.url(later), { after: ['bad'] }),
    ];
    const { result, settled } = run(endpoint(tasks));
    // The result is known while "slow" is still waiting for its answer.
    const outcome = await result;
    expect(outcome).toMatchObject({ ok: false, failedTask: 'bad' });
    if (!outcome.ok) expect(outcome.error.message).toContain('answered 400');
    expect(observer.events.find((e) => e.taskId === 'slow')).toBeUndefined();
    releaseSlow();
    await settled;
    expect(observer.outcome('slow').outcome).toBe('succeeded');
    expect(observer.outcome('bad')).toMatchObject({ outcome: 'failed', error: expect.stringContaining('answered 400') });
    expect(observer.outcome('later').outcome).toBe('not-started');
    expect(observer.outcome('mail').outcome).toBe('not-started');
    expect(http.requestsTo(later)).toHaveLength(0);
    expect(smtp.messages.length).toBe(before);
  });

  it('lets the request succeed past a task with ignore-if-error, and its dependants run', async () => {
    const broken = path('broken');
    const next = path('next');
    http.route(broken, { status: 500 }).route(next, { body: '' });
    const before = smtp.messages.length;
    const tasks: Task[] = [
      httpTask('broken', http.url(broken), { ignoreIfError: true }),
      httpTask('next', http.url(next), { after: ['broken'] }),
      emailTask('mail', { after: ['broken'], toSources: ['ada@example.com'] }),
    ];
    const { result, settled } = run(endpoint(tasks));
    expect((await result).ok).toBe(true);
    await settled;
    expect(observer.outcome('broken')).toMatchObject({ outcome: 'ignored-failure', error: expect.stringContaining('answered 500') });
    expect(http.requestsTo(next)).toHaveLength(1);
    expect(smtp.messages.length).toBe(before + 1);
  });

  it('fails a task whose input value was never produced, naming the value', async () => {
    const p = path('needs');
    http.route(p, { body: '' });
    // A producer with ignore-if-error is refused by validate; built by hand here to see the runtime hold.
    const producer = path('producer');
    http.route(producer, { status: 500 });
    const tasks: Task[] = [
      httpTask('producer', http.url(producer), { ignoreIfError: true, outputs: [out('token', 'jsonpath', '$.t')] }),
      httpTask('needs', http.url(p) + '?t=${token}', { inputs: ['token'] }),
    ];
    const outcome = await run(endpoint(tasks)).result;
    expect(outcome).toMatchObject({
      ok: false,
      failedTask: 'needs',
      error: expect.objectContaining({ message: expect.stringContaining('intermediate value "token"') }),
    });
    expect(http.requestsTo(p)).toHaveLength(0);
  });

  it('fails the task when an intermediate value has the wrong format', async () => {
    const p = path('xmlish');
    http.route(p, { headers: { 'content-type': 'text/xml' }, body: '<a>1</a>' });
    const outcome = await run(endpoint([httpTask('get', http.url(p), { outputs: [out('v', 'jsonpath', '$.a')] })])).result;
    expect(outcome).toMatchObject({
      ok: false,
      failedTask: 'get',
      error: expect.objectContaining({ message: expect.stringContaining('JSONPath output expects JSON') }),
    });
    expect(observer.outcome('get')).toMatchObject({ outcome: 'failed', attempts: 1 });
  });

  it('fails a task that times out', async () => {
    const p = path('hang');
    http.route(p, { never: true });
    const outcome = await run(endpoint([httpTask('hang', http.url(p), { timeoutMs: 200 })])).result;
    expect(outcome).toMatchObject({ ok: false, failedTask: 'hang', error: expect.objectContaining({ message: expect.stringContaining('within 200 ms') }) });
  });

  it('never rejects, even when nobody awaits the result (background mode)', async () => {
    const p = path('bg');
    http.route(p, { status: 500 });
    const { settled } = run(endpoint([httpTask('bg', http.url(p))]));
    await settled;
    expect(observer.outcome('bg').outcome).toBe('failed');
  });
});

describe('email', () => {
  it('delivers only after every other task has finished', async () => {
    const slow = path('slow-mail');
    http.route(slow, { body: 'ok', hold: () => new Promise((r) => setTimeout(r, 200)) });
    const before = smtp.messages.length;
    const tasks: Task[] = [
      emailTask('mail', { toSources: ['ada@example.com', 'bob@example.com'], subjectSource: 'Order ${id}' }),
      httpTask('slow', http.url(slow)),
    ];
    const { result } = run(endpoint(tasks), { id: '17' });
    expect((await result).ok).toBe(true);
    const mails = smtp.messages.slice(before);
    expect(mails.map((m) => m.envelope.to)).toEqual([['ada@example.com'], ['bob@example.com']]);
    expect(mails.map((m) => m.parsed.subject)).toEqual(['Order 17', 'Order 17']);
    const slowEnded = http.requestsTo(slow)[0]!.endedAt!;
    for (const m of mails) expect(m.receivedAt).toBeGreaterThan(slowEnded);
  });

  it('reuses one pooled SMTP connection across requests', async () => {
    observer = new RecordingObserver();
    const ep = endpoint([emailTask('mail')]);
    const services = new TaskEngine(
      TASK_KINDS,
      { application: application([ep]), env: {}, settings: { ...DEFAULT_TASK_SETTINGS, email: { smtpUrl: smtp.url } }, warn: () => {} },
      observer,
    );
    open.push(services);
    const before = smtp.messages.length;
    for (const id of ['r1', 'r2']) {
      const { result } = services.start({ endpoint: ep, scope: scope(), uploads: RequestUploads.NONE, requestId: id });
      expect((await result).ok).toBe(true);
    }
    const [first, second] = smtp.messages.slice(before);
    expect(second!.connectionId).toBe(first!.connectionId);
  });

  it('fails the request when the SMTP server refuses a recipient', async () => {
    const before = smtp.messages.length;
    const outcome = await run(endpoint([emailTask('mail', { toSources: ['nobody@example.com', 'ada@example.com'] })])).result;
    expect(outcome).toMatchObject({ ok: false, failedTask: 'mail' });
    expect(observer.outcome('mail')).toMatchObject({ outcome: 'failed', error: expect.stringMatching(/nobody@example\.com/) });
    expect(smtp.messages.length).toBe(before);
  });

  it('fails the request when the SMTP server is down', async () => {
    const port = await closedPort();
    const outcome = await run(endpoint([emailTask('mail')]), {}, `smtp://127.0.0.1:${port}`).result;
    expect(outcome).toMatchObject({ ok: false, failedTask: 'mail', error: expect.objectContaining({ message: expect.stringContaining('ECONNREFUSED') }) });
  });

  it('refuses a line break in a subject built from request data', async () => {
    const before = smtp.messages.length;
    const outcome = await run(endpoint([emailTask('mail', { subjectSource: 'Hello ${name}' })]), { name: 'x\r\nBcc: victim@example.com' }).result;
    expect(outcome).toMatchObject({ ok: false, failedTask: 'mail', error: expect.objectContaining({ message: expect.stringMatching(/line break/) }) });
    expect(observer.outcome('mail')).toMatchObject({ outcome: 'failed', attempts: 0 });
    expect(smtp.messages.length).toBe(before);
  });

  it('keeps the request successful when an ignore-if-error email is refused, and still sends the others', async () => {
    const before = smtp.messages.length;
    const tasks: Task[] = [
      emailTask('optional', { toSources: ['nobody@example.com'], ignoreIfError: true }),
      emailTask('main', { toSources: ['ada@example.com'] }),
    ];
    const { result, settled } = run(endpoint(tasks));
    expect((await result).ok).toBe(true);
    await settled;
    expect(observer.outcome('optional').outcome).toBe('ignored-failure');
    expect(observer.outcome('main').outcome).toBe('succeeded');
    expect(smtp.messages.slice(before).map((m) => m.envelope.to)).toEqual([['ada@example.com']]);
  });
});
