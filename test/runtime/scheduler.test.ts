// scheduleTasks with fake steps: no kind, no network. Every execute is a deferred promise the
// test settles, and `tick()` lets the scheduler's microtasks run out, so each ordering below is
// decided by the test, never by a timer.

import { describe, expect, it } from 'vitest';
import type { OutputIntermediateValue, Task } from '../../src/compiler/ast.js';
import { buildTaskGraph } from '../../src/compiler/task-graph.js';
import type { Position } from '../../src/position.js';
import { scheduleTasks, type ResumeState, type TaskReport, type TaskRun, type TaskRunResult, type TaskStep } from '../../src/runtime/scheduler.js';
import { TaskError } from '../../src/tasks/errors.js';
import type { ExecuteControl, ExecuteResult } from '../../src/tasks/kind.js';
import type { ExpansionScope } from '../../src/template/expand.js';
import type { Condition, Template, TemplatePart } from '../../src/template/types.js';
import { selector } from '../tasks/builders.js';

// ---------------------------------------------------------------------------------------
// Building blocks

const at: Position = { file: 'endpoints.xml', line: 1, column: 1 };

interface FakeTaskOptions {
  readonly after?: readonly string[];
  readonly inputs?: readonly string[];
  readonly outputs?: readonly string[];
  readonly condition?: Condition | null;
  readonly ignoreIfError?: boolean;
}

function fakeTask(id: string, options: FakeTaskOptions = {}): Task {
  const outputs: OutputIntermediateValue[] = (options.outputs ?? []).map((name) => ({
    name,
    selector: selector('jsonpath', `$.${name}`),
    regex: null,
    position: at,
  }));
  return {
    kind: 'fake',
    id,
    explicitId: true,
    className: 'Fake',
    condition: options.condition ?? null,
    ignoreIfError: options.ignoreIfError ?? false,
    timeoutMs: 1_000,
    retries: 0,
    after: options.after ?? [],
    inputs: options.inputs ?? [],
    outputs,
    position: at,
  };
}

function template(parts: TemplatePart[], source: string): Template {
  return { source, escaping: 'none', parts };
}

/** `${parameter} equals "value"`, as the compiler builds it. */
function parameterEquals(parameter: string, value: string): Condition {
  return {
    kind: 'compare',
    operator: 'equals',
    left: template([{ kind: 'parameter', name: parameter }], `\${${parameter}}`),
    right: template([{ kind: 'literal', text: value }], value),
    text: `\${${parameter}} equals "${value}"`,
  };
}

function requestScope(parameters: Record<string, string> = {}): ExpansionScope {
  return {
    parameters: new Map(Object.entries(parameters)),
    system: {
      'request-id': 'req-1',
      endpoint: 'test',
      environment: 'live',
      'client-ip': '127.0.0.1',
      'user-agent': 'vitest',
      'base-url': 'http://127.0.0.1',
      'body-sha256': '',
    },
    env: {},
  };
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every queued microtask (and those they queue) run: setImmediate comes after all of them. */
function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

interface HarnessOptions {
  /** Ids of tasks whose step delivers last. */
  readonly deliversLast?: readonly string[];
  /** prepare throws this for the task. */
  readonly prepareThrows?: Readonly<Record<string, unknown>>;
  readonly scope?: ExpansionScope;
  /** Replaces the recording report callback (it still records first). */
  readonly report?: (report: TaskReport) => void;
  /** stepFor throws for these tasks. */
  readonly stepForThrows?: readonly string[];
  /** A run taken up again (the queue). */
  readonly resume?: ResumeState;
}

/** One scheduled run over fake steps, with everything the steps saw recorded. */
class Harness {
  /** `prepare <id>` and `execute <id>`, in the order they happened. */
  readonly events: string[] = [];
  readonly reports: TaskReport[] = [];
  readonly scopes = new Map<string, ExpansionScope>();
  readonly controls = new Map<string, ExecuteControl>();
  readonly preparedSeen = new Map<string, unknown>();
  readonly run: TaskRun;
  result: TaskRunResult | null = null;
  settled = false;
  private readonly executions = new Map<string, Deferred<ExecuteResult>>();

  constructor(
    readonly tasks: readonly Task[],
    options: HarnessOptions = {},
  ) {
    const graph = buildTaskGraph(tasks.map((t) => ({ id: t.id, after: t.after, inputs: t.inputs, outputs: t.outputs.map((o) => o.name) })));
    expect(graph.cycles).toEqual([]);
    const last = new Set(options.deliversLast ?? []);
    const steps = new Map<string, TaskStep>();
    for (const task of tasks) {
      steps.set(task.id, {
        deliversLast: last.has(task.id),
        prepare: (t, scope) => {
          this.events.push(`prepare ${t.id}`);
          this.scopes.set(t.id, scope);
          const thrown = options.prepareThrows?.[t.id];
          if (thrown !== undefined) throw thrown;
          return { preparedFor: t.id };
        },
        execute: (t, prepared, control) => {
          this.events.push(`execute ${t.id}`);
          expect(this.executions.has(t.id), `${t.id} executed twice`).toBe(false);
          this.preparedSeen.set(t.id, prepared);
          this.controls.set(t.id, control);
          const d = deferred<ExecuteResult>();
          this.executions.set(t.id, d);
          return d.promise;
        },
      });
    }
    const stepForThrows = new Set(options.stepForThrows ?? []);
    this.run = scheduleTasks({
      tasks,
      graph,
      separator: '||',
      scope: options.scope ?? requestScope(),
      ...(options.resume !== undefined ? { resume: options.resume } : {}),
      stepFor: (task) => {
        if (stepForThrows.has(task.id)) throw new Error(`no step for ${task.id}`);
        return steps.get(task.id)!;
      },
      report: (report) => {
        this.reports.push(report);
        options.report?.(report);
      },
    });
    void this.run.result.then((r) => (this.result = r));
    void this.run.settled.then(() => (this.settled = true));
  }

  executing(id: string): boolean {
    return this.executions.has(id);
  }

  prepared(id: string): boolean {
    return this.events.includes(`prepare ${id}`);
  }

  resolve(id: string, result: ExecuteResult = { attempts: 1 }): void {
    const d = this.executions.get(id);
    if (d === undefined) throw new Error(`task ${id} is not executing`);
    d.resolve(result);
  }

  reject(id: string, error: unknown): void {
    const d = this.executions.get(id);
    if (d === undefined) throw new Error(`task ${id} is not executing`);
    d.reject(error);
  }

  /** The one report of the task (a task is reported exactly once). */
  report(id: string): TaskReport {
    const found = this.reports.filter((r) => r.task.id === id);
    expect(found, `reports of ${id}`).toHaveLength(1);
    return found[0]!;
  }

  reported(id: string): boolean {
    return this.reports.some((r) => r.task.id === id);
  }

  /** Every task reported exactly once, nothing else. */
  expectAllReportedOnce(): void {
    expect(this.reports.map((r) => r.task.id).sort()).toEqual(this.tasks.map((t) => t.id).sort());
  }
}

const failure = (code: TaskError['code'], attempts = 1, message = `${code} failure`) => new TaskError(message, { code, attempts });

// ---------------------------------------------------------------------------------------

describe('scheduleTasks: ordering', () => {
  it('starts independent tasks concurrently: both execute before either has finished', async () => {
    const h = new Harness([fakeTask('a'), fakeTask('b')]);
    await tick();
    expect(h.executing('a')).toBe(true);
    expect(h.executing('b')).toBe(true);
    expect(h.reports).toEqual([]);
    expect(h.result).toBeNull();
    h.resolve('b');
    h.resolve('a');
    await tick();
    expect(h.result).toEqual({ ok: true, intermediate: new Map() });
    expect(h.settled).toBe(true);
  });

  it('starts a task only after every dependency (after and inputs) has finished', async () => {
    const h = new Harness([
      fakeTask('a'),
      fakeTask('b', { outputs: ['x', 'y'] }),
      // c waits for a by <after> and for b by the intermediate value x.
      fakeTask('c', { after: ['a'], inputs: ['x'] }),
    ]);
    await tick();
    expect(h.executing('a') && h.executing('b')).toBe(true);
    expect(h.prepared('c')).toBe(false);

    h.resolve('a');
    await tick();
    expect(h.report('a').outcome).toBe('succeeded');
    // b is still running: c must wait for its value.
    expect(h.prepared('c')).toBe(false);

    h.resolve('b', {
      attempts: 1,
      outputs: new Map([
        ['x', '42'],
        ['y', 'unused'],
      ]),
    });
    await tick();
    expect(h.executing('c')).toBe(true);
    expect(h.events.indexOf('prepare c')).toBeGreaterThan(h.events.indexOf('execute b'));
    expect(h.result).toBeNull();

    h.resolve('c');
    await tick();
    expect(h.result).toEqual({
      ok: true,
      intermediate: new Map([
        ['x', '42'],
        ['y', 'unused'],
      ]),
    });
    h.expectAllReportedOnce();
  });

  it("hands the dependant the values it declares as inputs in scope.intermediate, with the request's scope", async () => {
    const base = requestScope({ name: 'Ann' });
    const h = new Harness([fakeTask('producer', { outputs: ['id', 'other'] }), fakeTask('consumer', { inputs: ['id'] })], { scope: base });
    await tick();
    // The producer saw no intermediate value yet.
    expect([...(h.scopes.get('producer')!.intermediate ?? new Map())]).toEqual([]);
    h.resolve('producer', {
      attempts: 1,
      outputs: new Map([
        ['id', '7'],
        ['other', 'not declared'],
      ]),
    });
    await tick();
    const scope = h.scopes.get('consumer')!;
    // Only the declared input, not every value produced so far.
    expect([...scope.intermediate!]).toEqual([['id', '7']]);
    expect(scope.parameters.get('name')).toBe('Ann');
    expect(scope.system['request-id']).toBe('req-1');
    // What prepare returned is what execute receives.
    expect(h.preparedSeen.get('consumer')).toEqual({ preparedFor: 'consumer' });
    h.resolve('consumer');
    await tick();
    expect(h.result?.ok).toBe(true);
  });

  it('runs a chain one task at a time, in dependency order', async () => {
    const h = new Harness([fakeTask('c', { after: ['b'] }), fakeTask('b', { after: ['a'] }), fakeTask('a')]);
    await tick();
    expect(h.events).toEqual(['prepare a', 'execute a']);
    h.resolve('a');
    await tick();
    expect(h.events).toEqual(['prepare a', 'execute a', 'prepare b', 'execute b']);
    h.resolve('b');
    await tick();
    expect(h.events.slice(4)).toEqual(['prepare c', 'execute c']);
    h.resolve('c');
    await tick();
    expect(h.reports.map((r) => r.task.id)).toEqual(['a', 'b', 'c']);
    expect(h.result?.ok).toBe(true);
  });

  it('settles at once, ok, with no tasks', async () => {
    const h = new Harness([]);
    await tick();
    expect(h.result).toEqual({ ok: true, intermediate: new Map() });
    expect(h.settled).toBe(true);
  });
});

describe('scheduleTasks: fail-fast', () => {
  it('settles the result on the first failure, reports tasks not started, lets a running sibling finish', async () => {
    const h = new Harness([
      fakeTask('fails'),
      fakeTask('sibling'),
      fakeTask('after-fails', { after: ['fails'] }),
      fakeTask('after-that', { after: ['after-fails'] }),
      fakeTask('after-sibling', { after: ['sibling'] }),
    ]);
    await tick();
    expect(h.executing('fails') && h.executing('sibling')).toBe(true);
    expect(h.controls.get('sibling')!.mayContinue()).toBe(true);

    const error = failure('http-status', 3, 'upstream answered 503');
    h.reject('fails', error);
    await tick();

    // The result is known now, before the sibling is done.
    expect(h.result).toEqual({ ok: false, cause: 'task-failed', failedTask: 'fails', error });
    expect(h.result!.ok === false && h.result!.error).toBe(error);
    const failed = h.report('fails');
    expect(failed.outcome).toBe('failed');
    expect(failed.attempts).toBe(3);
    expect(failed.error?.code).toBe('http-status');
    for (const id of ['after-fails', 'after-that', 'after-sibling']) {
      const r = h.report(id);
      expect(r.outcome).toBe('not-started');
      expect(r.reason).toBe('not started: task "fails" failed');
      expect(r.attempts).toBe(0);
    }
    // The sibling keeps running and learns that the request failed.
    expect(h.reported('sibling')).toBe(false);
    expect(h.controls.get('sibling')!.mayContinue()).toBe(false);
    expect(h.settled).toBe(false);

    h.resolve('sibling', { attempts: 2 });
    await tick();
    const sibling = h.report('sibling');
    expect(sibling.outcome).toBe('succeeded');
    expect(sibling.attempts).toBe(2);
    expect(h.settled).toBe(true);
    // Nothing that was not started was ever prepared, not even once the sibling released it.
    for (const id of ['after-fails', 'after-that', 'after-sibling']) expect(h.prepared(id)).toBe(false);
    expect(h.events.filter((e) => e.startsWith('execute')).sort()).toEqual(['execute fails', 'execute sibling']);
    // The result did not change when the sibling succeeded.
    expect(h.result?.ok).toBe(false);
    h.expectAllReportedOnce();
  });

  it('keeps the first failure when a running sibling fails too, and still reports the sibling', async () => {
    const h = new Harness([fakeTask('first'), fakeTask('second')]);
    await tick();
    const first = failure('timeout', 2);
    h.reject('first', first);
    await tick();
    h.reject('second', failure('connection', 1));
    await tick();
    expect(h.result).toEqual({ ok: false, cause: 'task-failed', failedTask: 'first', error: first });
    expect(h.report('second').outcome).toBe('failed');
    expect(h.report('second').error?.code).toBe('connection');
    expect(h.settled).toBe(true);
  });

  it('settled waits for a running sibling in the failure case and never rejects', async () => {
    const h = new Harness([fakeTask('fails'), fakeTask('slow')]);
    await tick();
    h.reject('fails', failure('connection'));
    await tick();
    expect(h.result?.ok).toBe(false);
    expect(h.settled).toBe(false);
    h.reject('slow', new Error('also broken'));
    await expect(h.run.settled).resolves.toBeUndefined();
    expect(h.report('slow').outcome).toBe('failed');
  });
});

describe('scheduleTasks: siblings of a synchronous failure', () => {
  // Tasks released together are launched together, each deferred so that one's synchronous
  // failure cannot stop the loop that launches the others; but the first failure stops new
  // starts, so a sibling whose turn comes after it is reported not started and never runs.
  it('does not start a sibling launched with a task that fails in prepare, and reports it', async () => {
    const h = new Harness([fakeTask('bad'), fakeTask('sibling'), fakeTask('later', { after: ['bad'] })], { prepareThrows: { bad: new Error('no value') } });
    await tick();
    expect(h.result).toMatchObject({ ok: false, failedTask: 'bad' });
    expect(h.executing('sibling')).toBe(false);
    expect(h.events).not.toContain('prepare sibling');
    expect(h.report('sibling')).toMatchObject({ outcome: 'not-started', reason: 'not started: task "bad" failed' });
    expect(h.report('later').outcome).toBe('not-started');
    expect(h.settled).toBe(true);
    h.expectAllReportedOnce();
  });
});

describe('scheduleTasks: ignore-if-error', () => {
  it('reports an ignored failure, runs its dependants and succeeds', async () => {
    const h = new Harness([fakeTask('optional', { ignoreIfError: true }), fakeTask('next', { after: ['optional'] })]);
    await tick();
    h.reject('optional', failure('timeout', 4));
    await tick();
    const r = h.report('optional');
    expect(r.outcome).toBe('ignored-failure');
    expect(r.error?.code).toBe('timeout');
    expect(r.attempts).toBe(4);
    expect(h.executing('next')).toBe(true);
    // An ignored failure does not count: the others may go on.
    expect(h.controls.get('next')!.mayContinue()).toBe(true);
    expect(h.result).toBeNull();
    h.resolve('next');
    await tick();
    expect(h.result).toEqual({ ok: true, intermediate: new Map() });
    expect(h.report('next').outcome).toBe('succeeded');
  });

  it('fails the request when the same failure is not ignored (control)', async () => {
    const h = new Harness([fakeTask('required'), fakeTask('next', { after: ['required'] })]);
    await tick();
    h.reject('required', failure('timeout', 4));
    await tick();
    expect(h.report('required').outcome).toBe('failed');
    expect(h.report('next').outcome).toBe('not-started');
    expect(h.result?.ok).toBe(false);
  });
});

describe('scheduleTasks: conditions', () => {
  const tasks = () => [fakeTask('maybe', { condition: parameterEquals('flag', 'yes') }), fakeTask('next', { after: ['maybe'] })];

  it('skips a task whose condition is false, never prepares it, and runs its dependants', async () => {
    const h = new Harness(tasks(), { scope: requestScope({ flag: 'no' }) });
    await tick();
    const r = h.report('maybe');
    expect(r.outcome).toBe('skipped');
    expect(r.attempts).toBe(0);
    expect(r.error).toBeUndefined();
    expect(h.prepared('maybe')).toBe(false);
    expect(h.executing('next')).toBe(true);
    h.resolve('next');
    await tick();
    expect(h.result?.ok).toBe(true);
  });

  it('runs a task whose condition holds', async () => {
    const h = new Harness(tasks(), { scope: requestScope({ flag: 'yes' }) });
    await tick();
    expect(h.executing('maybe')).toBe(true);
    expect(h.prepared('next')).toBe(false);
    h.resolve('maybe');
    await tick();
    h.resolve('next');
    await tick();
    expect(h.report('maybe').outcome).toBe('succeeded');
    expect(h.result?.ok).toBe(true);
  });

  it("fails a task whose condition cannot be evaluated, with code 'condition'", async () => {
    // No "flag" parameter in scope: the condition's template has no value.
    const h = new Harness(tasks(), { scope: requestScope() });
    await tick();
    const r = h.report('maybe');
    expect(r.outcome).toBe('failed');
    expect(r.error).toBeInstanceOf(TaskError);
    expect(r.error?.code).toBe('condition');
    expect(r.error?.message).toMatch(/^condition: .*flag/);
    expect(h.prepared('maybe')).toBe(false);
    expect(h.result).toMatchObject({ ok: false, failedTask: 'maybe' });
  });
});

describe('scheduleTasks: delivers last', () => {
  it('prepares when its dependencies are done, releases its dependants then, executes after every other task', async () => {
    const h = new Harness([fakeTask('first'), fakeTask('mail', { after: ['first'] }), fakeTask('after-mail', { after: ['mail'] }), fakeTask('other')], {
      deliversLast: ['mail'],
    });
    await tick();
    expect(h.prepared('mail')).toBe(false);

    h.resolve('first');
    await tick();
    // Prepared now, not executed; its dependant runs already (no deadlock).
    expect(h.prepared('mail')).toBe(true);
    expect(h.executing('mail')).toBe(false);
    expect(h.executing('after-mail')).toBe(true);
    expect(h.reported('mail')).toBe(false);

    h.resolve('after-mail');
    await tick();
    expect(h.executing('mail')).toBe(false);

    h.resolve('other');
    await tick();
    // Everything else has finished: now it is delivered.
    expect(h.executing('mail')).toBe(true);
    expect(h.events[h.events.length - 1]).toBe('execute mail');
    expect(h.result).toBeNull();
    expect(h.preparedSeen.get('mail')).toEqual({ preparedFor: 'mail' });

    h.resolve('mail', { attempts: 2 });
    await tick();
    expect(h.report('mail')).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    expect(h.result?.ok).toBe(true);
    expect(h.settled).toBe(true);
    h.expectAllReportedOnce();
  });

  it('is not delivered, nor executed, when another task fails before delivery', async () => {
    const h = new Harness([fakeTask('mail'), fakeTask('fails')], { deliversLast: ['mail'] });
    await tick();
    expect(h.prepared('mail')).toBe(true);
    h.reject('fails', failure('http-status'));
    await tick();
    const r = h.report('mail');
    expect(r.outcome).toBe('not-started');
    expect(r.reason).toBe('not delivered: task "fails" failed');
    expect(h.executing('mail')).toBe(false);
    expect(h.result).toMatchObject({ ok: false, failedTask: 'fails' });
    expect(h.settled).toBe(true);
    await tick();
    expect(h.executing('mail')).toBe(false);
  });

  it('is neither prepared nor delivered when launched together with a task that fails synchronously', async () => {
    // Both are launched together; the first fails in prepare, before the mail's turn comes:
    // the mail is not started, rather than kept for a delivery that never comes.
    const h = new Harness([fakeTask('bad'), fakeTask('mail')], { deliversLast: ['mail'], prepareThrows: { bad: new Error('no value') } });
    await tick();
    expect(h.events).not.toContain('prepare mail');
    const r = h.report('mail');
    expect(r.outcome).toBe('not-started');
    expect(r.reason).toBe('not started: task "bad" failed');
    expect(h.executing('mail')).toBe(false);
    expect(h.settled).toBe(true);
    h.expectAllReportedOnce();
  });

  it('delivers a delivers-last task that is <after> another one together with it (no deadlock, no order between them)', async () => {
    // Documented (behaviour.md): a task after mail starts once the mail is composed. For two
    // delivers-last tasks this means both are delivered at the end, concurrently.
    const h = new Harness([fakeTask('mail-1'), fakeTask('mail-2', { after: ['mail-1'] })], { deliversLast: ['mail-1', 'mail-2'] });
    await tick();
    expect(h.events).toEqual(['prepare mail-1', 'prepare mail-2', 'execute mail-1', 'execute mail-2']);
    h.resolve('mail-2');
    h.resolve('mail-1');
    await tick();
    expect(h.result?.ok).toBe(true);
    h.expectAllReportedOnce();
  });

  it('reports a delivery stopped before anything was done (stopped.done null) as not started, naming the first failure', async () => {
    const h = new Harness([fakeTask('mail-1'), fakeTask('mail-2'), fakeTask('mail-3')], { deliversLast: ['mail-1', 'mail-2', 'mail-3'] });
    await tick();
    // All delivered together once nothing else is left.
    expect(h.executing('mail-1') && h.executing('mail-2') && h.executing('mail-3')).toBe(true);
    const control = h.controls.get('mail-2')!;
    expect(control.mayContinue()).toBe(true);

    const error = failure('smtp-rejected', 1);
    h.reject('mail-1', error);
    await tick();
    expect(h.result).toEqual({ ok: false, cause: 'task-failed', failedTask: 'mail-1', error });
    expect(control.mayContinue()).toBe(false);
    expect(h.reported('mail-2')).toBe(false);
    expect(h.settled).toBe(false);
    // A later failure changes neither the result nor whom the others blame.
    h.reject('mail-3', failure('connection'));
    await tick();
    expect(h.report('mail-3').outcome).toBe('failed');
    expect(h.result).toEqual({ ok: false, cause: 'task-failed', failedTask: 'mail-1', error });
    expect(h.settled).toBe(false);

    h.resolve('mail-2', { attempts: 1, stopped: { done: null } });
    await tick();
    const r = h.report('mail-2');
    expect(r.outcome).toBe('not-started');
    expect(r.reason).toBe('not delivered: task "mail-1" failed');
    expect(r.attempts).toBe(0);
    expect(h.settled).toBe(true);
  });

  it('reports a delivery stopped part way (stopped.done set) as failed, with what was done', async () => {
    const h = new Harness([fakeTask('mail-1'), fakeTask('mail-2')], { deliversLast: ['mail-1', 'mail-2'] });
    await tick();
    h.reject('mail-1', failure('smtp-rejected'));
    await tick();
    h.resolve('mail-2', { attempts: 3, stopped: { done: 'delivered 1 of 2 messages' } });
    await tick();
    const r = h.report('mail-2');
    expect(r.outcome).toBe('failed');
    expect(r.reason).toBe('delivered 1 of 2 messages: task "mail-1" failed');
    expect(r.attempts).toBe(3);
    expect(h.result).toMatchObject({ ok: false, failedTask: 'mail-1' });
    expect(h.settled).toBe(true);
  });

  // ExecuteResult.stopped and ExecuteControl are open to every kind ("a kind doing several
  // things stops between them"), not only to those that deliver last.
  it('reports a task that is not delivers-last and returns stopped as not finished', async () => {
    const h = new Harness([fakeTask('fails'), fakeTask('batch')]);
    await tick();
    h.reject('fails', failure('http-status'));
    await tick();
    expect(h.controls.get('batch')!.mayContinue()).toBe(false);
    h.resolve('batch', { attempts: 1, stopped: { done: null } });
    await tick();
    expect(h.report('batch').outcome).toBe('not-started');
  });

  it('waits for a delivering task before settling the result ok', async () => {
    const h = new Harness([fakeTask('mail')], { deliversLast: ['mail'] });
    await tick();
    expect(h.executing('mail')).toBe(true);
    expect(h.result).toBeNull();
    expect(h.settled).toBe(false);
    h.resolve('mail');
    await tick();
    expect(h.result?.ok).toBe(true);
    expect(h.settled).toBe(true);
  });
});

describe('scheduleTasks: errors and settled', () => {
  it("fails a task whose prepare throws a plain Error with a TaskError of code 'invalid-value', without executing it", async () => {
    const h = new Harness([fakeTask('bad'), fakeTask('next', { after: ['bad'] })], { prepareThrows: { bad: new Error('a line break in a header') } });
    await tick();
    const r = h.report('bad');
    expect(r.outcome).toBe('failed');
    expect(r.error).toBeInstanceOf(TaskError);
    expect(r.error?.code).toBe('invalid-value');
    expect(r.error?.message).toBe('a line break in a header');
    expect(r.attempts).toBe(0);
    expect(h.executing('bad')).toBe(false);
    expect(h.report('next').outcome).toBe('not-started');
    expect(h.result).toMatchObject({ ok: false, failedTask: 'bad' });
    expect(h.settled).toBe(true);
  });

  it('keeps the code of a TaskError thrown by prepare', async () => {
    const h = new Harness([fakeTask('bad')], { prepareThrows: { bad: new TaskError('no such scheme', { code: 'invalid-request' }) } });
    await tick();
    expect(h.report('bad').error?.code).toBe('invalid-request');
  });

  it("turns an execute rejecting with a plain Error into code 'internal', 0 attempts", async () => {
    const h = new Harness([fakeTask('buggy')]);
    await tick();
    h.reject('buggy', new TypeError('undefined is not a function'));
    await tick();
    const r = h.report('buggy');
    expect(r.outcome).toBe('failed');
    expect(r.error).toBeInstanceOf(TaskError);
    expect(r.error?.code).toBe('internal');
    expect(r.error?.message).toContain('undefined is not a function');
    expect(r.attempts).toBe(0);
    expect(h.result).toMatchObject({ ok: false, failedTask: 'buggy' });
  });

  it("fails a task whose step cannot be had (stepFor throws) with code 'internal'", async () => {
    const h = new Harness([fakeTask('orphan'), fakeTask('fine')], { stepForThrows: ['orphan'] });
    await tick();
    const r = h.report('orphan');
    expect(r.outcome).toBe('failed');
    expect(r.error?.code).toBe('internal');
    expect(r.error?.message).toContain('no step for orphan');
    expect(h.result).toMatchObject({ ok: false, failedTask: 'orphan' });
    // Its sibling had been started with it and still finishes.
    h.resolve('fine');
    await tick();
    expect(h.report('fine').outcome).toBe('succeeded');
    expect(h.settled).toBe(true);
  });

  it('is not broken by a report callback that throws', async () => {
    let calls = 0;
    const h = new Harness([fakeTask('a'), fakeTask('b', { after: ['a'] }), fakeTask('c', { after: ['b'] })], {
      report: () => {
        calls++;
        throw new Error('observer down');
      },
    });
    await tick();
    h.resolve('a');
    await tick();
    // The throw after a's report did not stop b from starting.
    expect(h.executing('b')).toBe(true);
    h.resolve('b');
    await tick();
    h.resolve('c');
    await tick();
    expect(calls).toBe(3);
    expect(h.result?.ok).toBe(true);
    expect(h.settled).toBe(true);
  });

  it('is not broken by a throwing report callback on the failure path either', async () => {
    const h = new Harness([fakeTask('fails'), fakeTask('sibling'), fakeTask('next', { after: ['fails'] })], {
      report: () => {
        throw new Error('observer down');
      },
    });
    await tick();
    h.reject('fails', failure('timeout'));
    await tick();
    expect(h.result).toMatchObject({ ok: false, failedTask: 'fails' });
    expect(h.report('next').outcome).toBe('not-started');
    h.resolve('sibling');
    await expect(h.run.settled).resolves.toBeUndefined();
    h.expectAllReportedOnce();
  });
});

describe('scheduleTasks: reported fields', () => {
  it('reports outcome, attempts, error code and a duration for each outcome', async () => {
    const h = new Harness(
      [
        fakeTask('ok'),
        fakeTask('ignored', { ignoreIfError: true }),
        fakeTask('skipped', { condition: parameterEquals('flag', 'yes') }),
        fakeTask('fails', { after: ['ok', 'ignored'] }),
        fakeTask('never', { after: ['fails'] }),
      ],
      { scope: requestScope({ flag: 'no' }) },
    );
    await tick();
    h.resolve('ok', { attempts: 5 });
    h.reject('ignored', new TaskError('refused', { code: 'connection', transient: true, attempts: 3 }));
    await tick();
    h.reject('fails', failure('response-too-large', 1));
    await tick();

    expect(h.report('ok')).toMatchObject({ outcome: 'succeeded', attempts: 5 });
    expect(h.report('ok').error).toBeUndefined();
    expect(h.report('ignored')).toMatchObject({ outcome: 'ignored-failure', attempts: 3 });
    expect(h.report('ignored').error).toMatchObject({ code: 'connection', transient: true });
    expect(h.report('skipped')).toMatchObject({ outcome: 'skipped', attempts: 0 });
    expect(h.report('fails')).toMatchObject({ outcome: 'failed', attempts: 1 });
    expect(h.report('fails').error?.code).toBe('response-too-large');
    expect(h.report('never')).toMatchObject({ outcome: 'not-started', attempts: 0, durationMs: 0 });
    for (const r of h.reports) {
      expect(r.durationMs).toBeGreaterThanOrEqual(0);
      expect(Number.isFinite(r.durationMs)).toBe(true);
    }
    h.expectAllReportedOnce();
  });
});

describe('a run taken up again, and interrupted', () => {
  it('runs only the unfinished tasks, with the intermediate values already produced', async () => {
    const h = new Harness([fakeTask('a', { outputs: ['x'] }), fakeTask('b', { inputs: ['x'] }), fakeTask('c')], {
      resume: { finished: new Set(['a']), intermediate: new Map([['x', 'from-before']]) },
    });
    await tick();
    expect(h.prepared('a')).toBe(false);
    expect(h.executing('b')).toBe(true);
    expect(h.executing('c')).toBe(true);
    expect(h.scopes.get('b')!.intermediate!.get('x')).toBe('from-before');
    h.resolve('b');
    h.resolve('c');
    await tick();
    expect(h.result).toEqual({ ok: true, intermediate: new Map([['x', 'from-before']]) });
    expect(h.reported('a')).toBe(false);
  });

  it('settles at once when every task was finished before', async () => {
    const h = new Harness([fakeTask('a'), fakeTask('mail', { after: ['a'] })], {
      deliversLast: ['mail'],
      resume: { finished: new Set(['a', 'mail']), intermediate: new Map() },
    });
    await tick();
    expect(h.events).toEqual([]);
    expect(h.result).toEqual({ ok: true, intermediate: new Map() });
    expect(h.settled).toBe(true);
  });

  it('reports the values a task produced with its success', async () => {
    const h = new Harness([fakeTask('a', { outputs: ['x'] })]);
    await tick();
    h.resolve('a', { attempts: 1, outputs: new Map([['x', '42']]) });
    await tick();
    expect(h.report('a').outputs).toEqual(new Map([['x', '42']]));
  });

  it('interrupt: starts nothing more, tells running tasks to stop, fails the result, settles when they end', async () => {
    const h = new Harness([fakeTask('a'), fakeTask('b', { after: ['a'] })]);
    await tick();
    const stop = new TaskError('the worker is shutting down', { code: 'shutting-down', transient: true });
    h.run.interrupt(stop);
    await tick();
    expect(h.result).toEqual({ ok: false, cause: 'interrupted', error: stop });
    expect(h.report('b')).toMatchObject({ outcome: 'not-started', reason: 'not started: the run was interrupted (the worker is shutting down)' });
    expect(h.controls.get('a')!.mayContinue()).toBe(false);
    expect(h.settled).toBe(false);
    h.resolve('a');
    await tick();
    expect(h.executing('b')).toBe(false);
    expect(h.settled).toBe(true);
    h.expectAllReportedOnce();
  });

  // A run of one task takes a path of its own (no graph, no state per task): the same outcomes.
  it('interrupt of a run of one task: fails the result at once, and reports the task when it returns stopped', async () => {
    const h = new Harness([fakeTask('a')]);
    await tick();
    const stop = new TaskError('the worker is shutting down', { code: 'shutting-down', transient: true });
    h.run.interrupt(stop);
    await tick();
    expect(h.result).toEqual({ ok: false, cause: 'interrupted', error: stop });
    expect(h.controls.get('a')!.mayContinue()).toBe(false);
    expect(h.reported('a')).toBe(false);
    expect(h.settled).toBe(false);
    h.resolve('a', { attempts: 1, stopped: { done: null } });
    await tick();
    expect(h.report('a')).toMatchObject({ outcome: 'not-started', reason: 'not started: the run was interrupted (the worker is shutting down)' });
    expect(h.settled).toBe(true);
    h.expectAllReportedOnce();
  });

  it('interrupt of a run of one task that delivers last: what it did is reported as not delivered', async () => {
    const h = new Harness([fakeTask('mail')], { deliversLast: ['mail'] });
    await tick();
    expect(h.executing('mail')).toBe(true);
    const stop = new TaskError('the worker is shutting down', { code: 'shutting-down', transient: true });
    h.run.interrupt(stop);
    h.resolve('mail', { attempts: 1, stopped: { done: null } });
    await tick();
    expect(h.result).toEqual({ ok: false, cause: 'interrupted', error: stop });
    expect(h.report('mail')).toMatchObject({ outcome: 'not-started', reason: 'not delivered: the run was interrupted (the worker is shutting down)' });
    expect(h.settled).toBe(true);
  });

  it('interrupt before a run of one task has started it: the task is not started, and the run settles at once', async () => {
    const h = new Harness([fakeTask('a')]);
    const stop = new TaskError('the worker is shutting down', { code: 'shutting-down', transient: true });
    h.run.interrupt(stop);
    await tick();
    expect(h.prepared('a')).toBe(false);
    expect(h.result).toEqual({ ok: false, cause: 'interrupted', error: stop });
    expect(h.report('a')).toMatchObject({ outcome: 'not-started', reason: 'not started: the run was interrupted (the worker is shutting down)' });
    expect(h.settled).toBe(true);
    h.expectAllReportedOnce();
  });

  it('a run of one task finished before settles at once, with the values it had produced', async () => {
    const h = new Harness([fakeTask('a', { outputs: ['x'] })], { resume: { finished: new Set(['a']), intermediate: new Map([['x', '1']]) } });
    await tick();
    expect(h.events).toEqual([]);
    expect(h.result).toEqual({ ok: true, intermediate: new Map([['x', '1']]) });
    expect(h.settled).toBe(true);
    expect(h.reported('a')).toBe(false);
  });
});
