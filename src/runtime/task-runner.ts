// The task engine: runs an endpoint's tasks for one request after its primary action
// succeeded. The exported types are what the request pipeline (serve) relies on.
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { Application, EmailTask, Endpoint, HttpRequestTask, Task } from '../compiler/ast.js';
import type { ExpansionScope } from '../template/expand.js';
import { evaluateCondition } from '../template/condition.js';
import { EmailDelivery, EmailTaskError } from '../tasks/email.js';
import type { HostAllowlist } from '../tasks/host-allowlist.js';
import { createHttpClient, HttpTaskError, sendHttpRequest, type HttpClient } from '../tasks/http-request.js';
import { extractOutputs } from '../tasks/outputs.js';
import { prepareEmails } from '../tasks/prepare-email.js';
import { prepareHttpRequest } from '../tasks/prepare-http-request.js';
import type { PreparedEmail } from '../tasks/prepared.js';
import type { RuntimeObserver, TaskOutcome } from './observer.js';
import type { Upload } from '../upload.js';

export interface TaskServicesOptions {
  readonly application: Application;
  readonly observer: RuntimeObserver;
  /** --smtp-url, else ENDPOINT_SERVICE_SMTP_URL, else undefined (then email-sending-configuration.xml). */
  readonly smtpUrl?: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** serve --allow-task-host; absent or null: HttpRequest tasks may call any host. */
  readonly allowedHosts?: HostAllowlist | null;
}

/** Long-lived, per process: pooled SMTP transport, HTTP client. */
export interface TaskServices {
  close(): Promise<void>;
}

export interface TaskRunRequest {
  readonly endpoint: Endpoint;
  /** Parameters, system values and env of the request. */
  readonly scope: ExpansionScope;
  readonly uploads: readonly Upload[];
  readonly requestId: string;
}

export type TaskRunResult =
  | { readonly ok: true; readonly intermediate: ReadonlyMap<string, string> }
  /** internalError: for logs and ${internal-error-text} only. */
  | { readonly ok: false; readonly failedTask: string; readonly internalError: string };

export interface TaskRun {
  /** Settles as soon as the outcome is known: all tasks done and mail delivered, or the first counting failure. */
  readonly result: Promise<TaskRunResult>;
  /** Settles when every started task has finished (shutdown waits for it). Never rejects. */
  readonly settled: Promise<void>;
}

/** The process's HTTP client and SMTP pool, shared by every request. */
export class TaskEngine implements TaskServices {
  readonly application: Application;
  readonly observer: RuntimeObserver;
  readonly http: HttpClient;
  readonly mail: EmailDelivery;
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(options: TaskServicesOptions) {
    this.application = options.application;
    this.observer = options.observer;
    // Own agents so close() can drop idle keep-alive sockets; the settings are those of Node's
    // global agent, whose idle timeout stays below common server keep-alive timeouts.
    const agentOptions = { keepAlive: true, timeout: 5_000 };
    this.agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };
    this.http = createHttpClient({ agent: this.agents, allowedHosts: options.allowedHosts ?? null });
    this.mail = new EmailDelivery({
      settings: options.application.email,
      smtpUrl: options.smtpUrl,
      env: options.env,
      onPoolError: (text) => {
        try {
          this.observer.warn(text);
        } catch {
          // A broken observer must not take the pool down with it.
        }
      },
    });
  }

  async close(): Promise<void> {
    await this.mail.close();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

export function createTaskServices(options: TaskServicesOptions): TaskServices {
  return new TaskEngine(options);
}

export function startTasks(request: TaskRunRequest, services: TaskServices): TaskRun {
  if (!(services instanceof TaskEngine)) throw new TypeError('startTasks needs the services made by createTaskServices');
  return new RequestRun(request, services).start();
}

// ---------------------------------------------------------------------------------------

type TaskState =
  | 'waiting'
  | 'running'
  /** An Email task whose messages are composed and wait for every other task to finish. */
  | 'composed'
  | 'done';

interface ComposedEmail {
  readonly task: EmailTask;
  readonly messages: readonly PreparedEmail[];
  /** Composition time, so the reported duration is the task's own work, not its wait. */
  readonly composeMs: number;
}

interface Failure {
  readonly taskId: string;
  readonly error: string;
}

/**
 * One request's tasks. A task starts once all its dependencies are done; the first failure
 * that counts stops new starts and resolves the result at once, while running tasks finish
 * and are still reported. Every method catches its own errors: a task can never reject a
 * promise that nobody awaits (background mode) and crash the process.
 */
class RequestRun {
  private readonly tasks: readonly Task[];
  private readonly byId: ReadonlyMap<string, Task>;
  private readonly state = new Map<string, TaskState>();
  private readonly pendingDeps = new Map<string, number>();
  private readonly intermediate = new Map<string, string>();
  private readonly composed: ComposedEmail[] = [];
  private failure: Failure | null = null;
  private delivering = false;
  private inFlight = 0;
  private resultDone = false;
  private resolveResult!: (result: TaskRunResult) => void;
  private resolveSettled!: () => void;
  readonly result: Promise<TaskRunResult>;
  readonly settled: Promise<void>;

  constructor(
    private readonly request: TaskRunRequest,
    private readonly engine: TaskEngine,
  ) {
    this.tasks = request.endpoint.tasks;
    this.byId = new Map(this.tasks.map((t) => [t.id, t]));
    this.result = new Promise((resolve) => (this.resolveResult = resolve));
    this.settled = new Promise((resolve) => (this.resolveSettled = resolve));
  }

  start(): TaskRun {
    const graph = this.request.endpoint.taskGraph;
    for (const task of this.tasks) {
      this.state.set(task.id, 'waiting');
      this.pendingDeps.set(task.id, (graph.dependsOn.get(task.id) ?? []).length);
    }
    for (const task of this.tasks) if (this.pendingDeps.get(task.id) === 0) this.launch(task);
    this.checkProgress();
    return { result: this.result, settled: this.settled };
  }

  private launch(task: Task): void {
    if (this.failure !== null || this.state.get(task.id) !== 'waiting') return;
    this.state.set(task.id, 'running');
    this.inFlight++;
    // Deferred so that a synchronous failure in one task cannot stop its siblings from starting.
    void Promise.resolve()
      .then(() => this.runTask(task))
      .catch((error: unknown) => this.taskFailed(task, `internal error: ${message(error)}`, 0, 0))
      .finally(() => {
        this.inFlight--;
        this.checkProgress();
      });
  }

  private async runTask(task: Task): Promise<void> {
    const started = performance.now();
    const scope = this.scopeFor(task);
    if (task.condition !== null) {
      let holds: boolean;
      try {
        holds = evaluateCondition(task.condition, scope, this.request.endpoint.separator);
      } catch (error) {
        this.taskFailed(task, `condition: ${message(error)}`, 0, performance.now() - started);
        return;
      }
      if (!holds) {
        this.report(task, 'skipped', performance.now() - started, 0);
        this.finish(task);
        return;
      }
    }
    if (task.kind === 'http-request') await this.runHttpRequest(task, scope, started);
    else this.composeEmail(task, scope, started);
  }

  private async runHttpRequest(task: HttpRequestTask, scope: ExpansionScope, started: number): Promise<void> {
    let attempts = 0;
    try {
      const prepared = prepareHttpRequest(task, scope);
      const answer = await sendHttpRequest(this.engine.http, prepared, { timeoutMs: task.timeoutMs, retries: task.retries });
      attempts = answer.attempts;
      const values = extractOutputs(task.outputs, answer);
      for (const [name, value] of values) this.intermediate.set(name, value);
    } catch (error) {
      if (error instanceof HttpTaskError) attempts = error.attempts;
      this.taskFailed(task, message(error), attempts, performance.now() - started);
      return;
    }
    this.report(task, 'succeeded', performance.now() - started, attempts);
    this.finish(task);
  }

  private composeEmail(task: EmailTask, scope: ExpansionScope, started: number): void {
    let messages: PreparedEmail[];
    try {
      messages = prepareEmails(task, scope, this.request.uploads, this.engine.application.email, this.request.endpoint.separator);
    } catch (error) {
      this.taskFailed(task, message(error), 0, performance.now() - started);
      return;
    }
    const composeMs = performance.now() - started;
    if (this.failure !== null) {
      this.report(task, 'not-started', composeMs, 0, `not delivered: task "${this.failure.taskId}" failed`);
      this.state.set(task.id, 'done');
      return;
    }
    this.composed.push({ task, messages, composeMs });
    // Composed counts as finished for the tasks after it: its delivery waits for all of them,
    // so making them wait for the delivery would deadlock.
    this.state.set(task.id, 'composed');
    this.releaseDependants(task);
  }

  private finish(task: Task): void {
    this.state.set(task.id, 'done');
    this.releaseDependants(task);
  }

  private releaseDependants(task: Task): void {
    const dependants = this.request.endpoint.taskGraph.dependents.get(task.id) ?? [];
    for (const id of dependants) {
      const left = (this.pendingDeps.get(id) ?? 1) - 1;
      this.pendingDeps.set(id, left);
      if (left === 0) {
        const next = this.byId.get(id);
        if (next) this.launch(next);
      }
    }
  }

  private taskFailed(task: Task, error: string, attempts: number, durationMs: number): void {
    if (task.ignoreIfError) {
      this.report(task, 'ignored-failure', durationMs, attempts, error);
      this.finish(task);
      return;
    }
    this.report(task, 'failed', durationMs, attempts, error);
    this.state.set(task.id, 'done');
    this.fail(task.id, error);
  }

  private fail(taskId: string, error: string): void {
    if (this.failure !== null) return;
    this.failure = { taskId, error };
    const reason = `not started: task "${taskId}" failed`;
    for (const task of this.tasks) {
      const state = this.state.get(task.id);
      if (state === 'waiting') {
        this.state.set(task.id, 'done');
        this.report(task, 'not-started', 0, 0, reason);
      } else if (state === 'composed' && !this.delivering) {
        this.state.set(task.id, 'done');
        this.report(task, 'not-started', 0, 0, `not delivered: task "${taskId}" failed`);
      }
    }
    this.settleResult({ ok: false, failedTask: taskId, internalError: `task "${taskId}" failed: ${error}` });
  }

  /** Called whenever work ends: starts mail delivery when all else is done, settles when idle. */
  private checkProgress(): void {
    if (this.inFlight === 0 && this.failure === null && !this.delivering && this.allTasksDone()) {
      if (this.composed.length === 0) {
        this.settleResult({ ok: true, intermediate: new Map(this.intermediate) });
      } else {
        this.startDelivery();
        return;
      }
    }
    if (this.inFlight === 0 && this.resultDone) this.resolveSettled();
  }

  private allTasksDone(): boolean {
    for (const state of this.state.values()) if (state === 'waiting' || state === 'running') return false;
    return true;
  }

  private startDelivery(): void {
    this.delivering = true;
    this.inFlight++;
    void Promise.all(this.composed.map((entry) => this.deliver(entry)))
      .then(() => {
        if (this.failure === null) this.settleResult({ ok: true, intermediate: new Map(this.intermediate) });
      })
      .catch((error: unknown) => {
        this.engine.observer.warn('email delivery failed unexpectedly', { requestId: this.request.requestId, error: message(error) });
        this.settleResult({ ok: false, failedTask: this.composed[0]?.task.id ?? '', internalError: `email delivery: ${message(error)}` });
      })
      .finally(() => {
        this.inFlight--;
        this.checkProgress();
      });
  }

  private async deliver(entry: ComposedEmail): Promise<void> {
    const { task } = entry;
    const started = performance.now();
    const elapsed = () => entry.composeMs + (performance.now() - started);
    try {
      const report = await this.engine.mail.deliver(entry.messages, {
        timeoutMs: task.timeoutMs,
        retries: task.retries,
        mayContinue: () => this.failure === null,
      });
      this.state.set(task.id, 'done');
      if (!report.stopped) {
        this.report(task, 'succeeded', elapsed(), report.attempts);
      } else if (report.sent === 0) {
        this.report(task, 'not-started', elapsed(), 0, `not delivered: task "${this.failure?.taskId}" failed`);
      } else {
        this.report(
          task,
          task.ignoreIfError ? 'ignored-failure' : 'failed',
          elapsed(),
          report.attempts,
          `delivery stopped after ${report.sent} of ${entry.messages.length} messages: task "${this.failure?.taskId}" failed`,
        );
      }
    } catch (error) {
      const attempts = error instanceof EmailTaskError ? error.attempts : 0;
      this.taskFailed(task, message(error), attempts, elapsed());
    }
  }

  private scopeFor(task: Task): ExpansionScope {
    const inputs = new Map<string, string>();
    for (const name of task.inputs) {
      const value = this.intermediate.get(name);
      // A value that was never produced stays absent: expanding it then fails the task with
      // the template's own "has not been produced" error, which names the value.
      if (value !== undefined) inputs.set(name, value);
    }
    return { ...this.request.scope, intermediate: inputs };
  }

  private settleResult(result: TaskRunResult): void {
    if (this.resultDone) return;
    this.resultDone = true;
    this.resolveResult(result);
  }

  private report(task: Task, outcome: TaskOutcome, durationMs: number, attempts: number, error?: string): void {
    try {
      this.engine.observer.taskFinished({
        requestId: this.request.requestId,
        endpoint: this.request.endpoint.name,
        taskId: task.id,
        kind: task.kind,
        outcome,
        durationMs: Math.round(durationMs * 1000) / 1000,
        attempts,
        ...(error !== undefined ? { error } : {}),
      });
    } catch {
      // A broken observer must not turn into a task failure or an unhandled rejection.
    }
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
