// A task kind added the documented way — one definition object, registered — is compiled,
// dry-run and served with no change to src/. The kind here, Log, is small but real: it compiles
// its own <message> template, prepares it per request, and "executes" by appending the text to
// its own services (no network I/O, nothing mocked).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Chalk } from 'chalk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatPlanJson } from '../../src/cli/plan/format-json.js';
import { formatPlanText } from '../../src/cli/plan/format-text.js';
import { buildPlan } from '../../src/cli/plan/simulate.js';
import type { Application, Task } from '../../src/compiler/ast.js';
import { single } from '../../src/compiler/context.js';
import { compileApplication } from '../../src/compiler/index.js';
import { compileTextTemplate } from '../../src/compiler/responses.js';
import { LoadedApplication } from '../../src/runtime/loaded.js';
import { runRequest } from '../../src/runtime/pipeline.js';
import type { TaskKind, TaskServices } from '../../src/tasks/kind.js';
import { TASK_KINDS } from '../../src/tasks/registry.js';
import { expandTemplate } from '../../src/template/expand.js';
import { RecordingObserver } from '../tasks/builders.js';
import type { Template } from '../../src/template/types.js';

// ---------------------------------------------------------------------------------------
// The kind

interface LogTask extends Task {
  readonly kind: 'log';
  readonly message: Template;
}

interface LogServices extends TaskServices {
  /** Every message executed in this process, in order. */
  readonly lines: string[];
  closed: boolean;
}

/** Every LogServices the kind made, so the test can see what execute did. */
const servicesMade: LogServices[] = [];

const logKind: TaskKind<LogTask, string, LogServices> = {
  kind: 'log',
  classNames: ['Log'],
  children: ['message'],
  hasOutputs: false,
  sendsMail: false,
  deliversLast: false,

  compile(ctx, read, scope, base, element) {
    const messageElement = single(ctx, read, 'message');
    if (messageElement === undefined) {
      ctx.diagnostics.report('missing-element', element.position, 'message', 'task');
      return null;
    }
    const message = compileTextTemplate(ctx, messageElement, 'none', scope);
    return message === null ? null : { ...base, kind: 'log', message };
  },

  prepare: (task, scope) => expandTemplate(task.message, scope),

  createServices() {
    const services: LogServices = {
      lines: [],
      closed: false,
      async close() {
        services.closed = true;
      },
    };
    servicesMade.push(services);
    return services;
  },

  async execute(_task, message, services) {
    services.lines.push(message);
    return { attempts: 1 };
  },

  describe(task, input) {
    const message = expandTemplate(task.message, input.shown);
    return { member: 'log', json: { message }, text: [{ indent: 6, head: 'log', headStyle: 'bold', text: message }] };
  },
};

const kinds = TASK_KINDS.with(logKind);

// ---------------------------------------------------------------------------------------
// The application

const ENDPOINTS = `<?xml version="1.0" encoding="UTF-8"?>
<endpoint-folder>
  <endpoint name="greet">
    <parameter name="name"/>
    <success>
      <after task-id="say-hello"/>
      <response-body>Greeted \${name}</response-body>
    </success>
    <task class="Log" id="say-hello">
      <message>Hello \${name}!</message>
    </task>
  </endpoint>
</endpoint-folder>
`;

let directory: string;
let file: string;

function writeApp(name: string, xml: string): string {
  const dir = path.join(directory, name);
  mkdirSync(dir, { recursive: true });
  const endpoints = path.join(dir, 'endpoints.xml');
  writeFileSync(endpoints, xml);
  return endpoints;
}

beforeAll(() => {
  directory = mkdtempSync(path.join(tmpdir(), 'endpoint-service-task-kind-'));
  file = writeApp('greet', ENDPOINTS);
});

afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

function compileWithLog(): Application {
  const result = compileApplication(file, { mode: 'serve', kinds: kinds.list, env: {} });
  expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  expect(result.application).not.toBeNull();
  return result.application!;
}

// ---------------------------------------------------------------------------------------

describe('a task kind registered with TASK_KINDS.with', () => {
  describe('compile', () => {
    it('compiles a <task class="Log"> with the kind, its template resolved against the endpoint', () => {
      const application = compileWithLog();
      const endpoint = application.endpointsByName.get('greet')!;
      expect(endpoint.tasks).toHaveLength(1);
      const task = endpoint.tasks[0] as LogTask;
      expect(task.kind).toBe('log');
      expect(task.className).toBe('Log');
      expect(task.id).toBe('say-hello');
      // The kind's own field, compiled by its compile(): ${name} is the declared parameter.
      expect(task.message.source).toBe('Hello ${name}!');
      expect(task.message.parts).toEqual([
        { kind: 'literal', text: 'Hello ' },
        { kind: 'parameter', name: 'name' },
        { kind: 'literal', text: '!' },
      ]);
      // The <success> waits for it (the graph and "deferred" are kind-agnostic).
      expect(endpoint.successes[0]!.after).toEqual(['say-hello']);
      expect(endpoint.successes[0]!.deferred).toBe(true);
    });

    it('refuses the class without the kind, with a message listing the registry (HttpRequest, Email), and nothing inside reported', () => {
      const result = compileApplication(file, { mode: 'serve', kinds: TASK_KINDS.list, env: {} });
      expect(result.application).toBeNull();
      // <message>, unknown to the default kinds, and <after task-id="say-hello"> are not follow-on errors.
      expect(result.diagnostics.map((d) => d.code)).toEqual(['unknown-task-class']);
      const message = result.diagnostics[0]!.message;
      expect(message).toContain('Unknown task class "Log"');
      expect(message).toContain('HttpRequest');
      expect(message).toContain('Email');
      expect(message).not.toMatch(/\bor Log\b/);
    });

    it('lists Log, and suggests it, in the message about an unknown class once registered', () => {
      const typo = writeApp('typo', ENDPOINTS.replace('class="Log"', 'class="Lgo"'));
      const withLog = compileApplication(typo, { mode: 'serve', kinds: kinds.list, env: {} });
      expect(withLog.diagnostics.map((d) => d.code)).toEqual(['unknown-task-class']);
      const message = withLog.diagnostics[0]!.message;
      expect(message).toMatch(/use HttpRequest or Email or Log\b/);
      expect(message).toContain('Did you mean "Log"?');
      // The same typo without the kind: Log is neither listed nor suggested.
      const without = compileApplication(typo, { mode: 'serve', kinds: TASK_KINDS.list, env: {} });
      expect(without.diagnostics[0]!.message).not.toContain('Log"');
      expect(without.diagnostics[0]!.message).not.toMatch(/\bor Log\b/);
    });

    it("checks the task's children against the kind's `children` and its outputs against `hasOutputs`", () => {
      const broken = writeApp(
        'broken',
        ENDPOINTS.replace('<message>Hello ${name}!</message>', '<mesage>Hi</mesage><output-intermediate-value name="x" jsonpath="$.x"/>'),
      );
      const result = compileApplication(broken, { mode: 'serve', kinds: kinds.list, env: {} });
      const codes = result.diagnostics.map((d) => d.code);
      // The misspelt child is unknown, with the kind's own child suggested...
      const unknown = result.diagnostics.find((d) => d.code === 'unknown-element');
      expect(unknown?.message).toContain('Did you mean <message>?');
      // ...the kind's compile() reports its required element...
      expect(codes).toContain('missing-element');
      expect(result.diagnostics.find((d) => d.code === 'missing-element')?.message).toBe('<task> needs a <message> element.');
      // ...and a kind without outputs may not declare one; only HttpRequest is named as having them.
      const outputs = result.diagnostics.find((d) => d.message.includes('cannot output intermediate values'));
      expect(outputs?.message).toContain('Log');
      expect(outputs?.message).toContain('only HttpRequest tasks');
      expect(result.application).toBeNull();
    });
  });

  describe('dry-run', () => {
    it("describes the task with the kind's describe(): member, JSON and text, with the expanded message", () => {
      const application = compileWithLog();
      const made = servicesMade.length;
      const plan = buildPlan(application, { endpoints: application.endpoints, parameters: new Map([['name', ['Ann']]]), env: {}, kinds });
      const task = plan.endpoints[0]!.tasks[0]!;
      expect(task.kind).toBe('log');
      expect(task.willRun).toBe(true);
      expect(task.failure).toBeNull();
      expect(task.detail?.member).toBe('log');
      expect(task.detail?.json).toEqual({ message: 'Hello Ann!' });

      const json = JSON.parse(formatPlanJson(plan)) as { endpoints: { tasks: Record<string, unknown>[] }[] };
      const taskJson = json.endpoints[0]!.tasks[0]!;
      expect(taskJson.kind).toBe('log');
      expect(taskJson.log).toEqual({ message: 'Hello Ann!' });
      expect(taskJson).not.toHaveProperty('request');
      expect(taskJson).not.toHaveProperty('emails');

      const text = formatPlanText(plan, new Chalk({ level: 0 }));
      expect(text).toContain('Hello Ann!');
      // A dry-run does nothing: no services made, nothing executed.
      expect(servicesMade.length).toBe(made);
    });

    it('shows no detail without a simulated request', () => {
      const application = compileWithLog();
      const plan = buildPlan(application, { endpoints: application.endpoints, parameters: null, env: {}, kinds });
      expect(plan.endpoints[0]!.tasks[0]!.detail).toBeNull();
      const json = JSON.parse(formatPlanJson(plan)) as { endpoints: { tasks: Record<string, unknown>[] }[] };
      expect(json.endpoints[0]!.tasks[0]).not.toHaveProperty('log');
    });
  });

  describe('serve', () => {
    it('runs the task on a request: execute gets the expanded message once, the observer a succeeded outcome of kind log', async () => {
      const application = compileWithLog();
      const endpoint = application.endpointsByName.get('greet')!;
      const observer = new RecordingObserver();
      const made = servicesMade.length;
      const loaded = new LoadedApplication(application, { env: {}, observer, upstreamTimeoutMs: 5000, kinds });
      try {
        const result = await runRequest(loaded, {
          endpoint,
          raw: new Map([['name', ['Ann']]]),
          uploads: [],
          info: { requestId: 'r1', clientIp: '127.0.0.1', userAgent: 'test', baseUrl: 'http://127.0.0.1' },
        });
        expect(result.outcome).toBe('success');
        expect(result.response).toEqual({ kind: 'body', status: 200, contentType: 'text/plain; charset=utf-8', body: 'Greeted Ann' });

        // One engine, so the kind's services were made once; its execute ran once, with the expanded text.
        expect(servicesMade.length).toBe(made + 1);
        const services = servicesMade[servicesMade.length - 1]!;
        expect(services.lines).toEqual(['Hello Ann!']);

        expect(observer.events).toHaveLength(1);
        expect(observer.events[0]).toMatchObject({ requestId: 'r1', endpoint: 'greet', taskId: 'say-hello', kind: 'log', outcome: 'succeeded', attempts: 1 });
        expect(observer.events[0]).not.toHaveProperty('code');
        expect(observer.warnings).toEqual([]);

        await loaded.tasksSettled();
        expect(loaded.runningTaskRuns).toBe(0);

        // A second request reuses the services.
        await runRequest(loaded, {
          endpoint,
          raw: new Map([['name', ['Bo']]]),
          uploads: [],
          info: { requestId: 'r2', clientIp: '127.0.0.1', userAgent: 'test', baseUrl: 'http://127.0.0.1' },
        });
        expect(servicesMade.length).toBe(made + 1);
        expect(services.lines).toEqual(['Hello Ann!', 'Hello Bo!']);
        expect(services.closed).toBe(false);
      } finally {
        await loaded.close();
      }
      // close() reaches the kind's services.
      expect(servicesMade[servicesMade.length - 1]!.closed).toBe(true);
    });
  });
});
