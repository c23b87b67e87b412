// One compiled application made ready to serve: secret keys expanded, the task engine created
// on first use, task runs tracked so that shutdown and reloads can wait for them.

import type { Application, Endpoint } from '../compiler/ast.js';
import type { OutboundPolicy } from '../tasks/outbound.js';
import type { TaskKinds } from '../tasks/registry.js';
import { DEFAULT_TASK_SETTINGS, outboundPolicyOf, type TaskSettings } from '../tasks/settings.js';
import { SYSTEM_PARAMETERS, type SystemParameter } from '../template/types.js';
import { resolveSecretKeys } from './hash.js';
import type { RuntimeObserver } from './observer.js';
import type { Guards } from './guards.js';
import type { PipelineContext } from './pipeline.js';
import type { DeduplicationStore } from './deduplication.js';
import { TaskEngine } from './task-runner.js';

export interface LoadOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly observer: RuntimeObserver;
  readonly upstreamTimeoutMs: number;
  /** The kinds the application was compiled with. */
  readonly kinds: TaskKinds;
  /** What the command line decided for every task kind; absent: every kind's defaults. */
  readonly taskSettings?: TaskSettings;
  /** serve --queue: background runs go to the durable queue. */
  readonly enqueueTasks?: PipelineContext['enqueueTasks'];
  /** Rate limits and CAPTCHA verification; needed only by an application that uses them. */
  readonly guards?: Guards;
  /** The record of <deduplicate> keys; needed only by an application that deduplicates. */
  readonly deduplication?: DeduplicationStore;
}

/** What a request's body is read for beyond its parameters: its uploaded files, its raw bytes. */
export interface BodyKeeping {
  readonly uploads: boolean;
  readonly raw: boolean;
}

/** The four combinations, shared: nothing is allocated per request. */
const KEEPING: readonly BodyKeeping[] = [
  { uploads: false, raw: false },
  { uploads: true, raw: false },
  { uploads: false, raw: true },
  { uploads: true, raw: true },
];

export class LoadedApplication implements PipelineContext {
  readonly secretKeys: readonly Buffer[] | null;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly observer: RuntimeObserver;
  readonly upstreamTimeoutMs: number;
  readonly kinds: TaskKinds;
  readonly taskSettings: TaskSettings;
  readonly enqueueTasks: PipelineContext['enqueueTasks'];
  readonly outbound: OutboundPolicy;
  readonly guards: Guards | null;
  readonly deduplication: DeduplicationStore | null;
  private engine: TaskEngine | null = null;
  private readonly running = new Set<Promise<void>>();
  private readonly uploadReaders: ReadonlySet<Endpoint>;

  constructor(
    readonly application: Application,
    private readonly options: LoadOptions,
  ) {
    this.env = options.env;
    this.observer = options.observer;
    this.upstreamTimeoutMs = options.upstreamTimeoutMs;
    this.kinds = options.kinds;
    this.taskSettings = options.taskSettings ?? DEFAULT_TASK_SETTINGS;
    this.enqueueTasks = options.enqueueTasks;
    this.guards = options.guards ?? null;
    this.deduplication = options.deduplication ?? null;
    this.outbound = outboundPolicyOf(this.taskSettings);
    const system = Object.fromEntries(SYSTEM_PARAMETERS.map((name) => [name, ''])) as Record<SystemParameter, string>;
    this.secretKeys = application.security === null ? null : resolveSecretKeys(application.security, { parameters: new Map(), system, env: this.env });
    this.uploadReaders = endpointsReadingUploads(application, options.kinds);
  }

  /**
   * Whether a request to `endpoint` should keep its uploaded files: a task of the endpoint, or
   * of an endpoint it may forward to (the target's tasks get the request's uploads), may use
   * them. Decided once per application; a request only looks it up.
   */
  keepsUploads(endpoint: Endpoint): boolean {
    return this.uploadReaders.has(endpoint);
  }

  /** What a request to `endpoint` keeps of its body: uploads (keepsUploads) and the raw bytes (Endpoint.keepsRequestBody). */
  bodyKeeping(endpoint: Endpoint): BodyKeeping {
    return KEEPING[(this.uploadReaders.has(endpoint) ? 1 : 0) + (endpoint.keepsRequestBody ? 2 : 0)]!;
  }

  taskEngine(): TaskEngine {
    if (this.engine === null) {
      const { observer } = this;
      this.engine = new TaskEngine(
        this.options.kinds,
        {
          application: this.application,
          env: this.env,
          settings: this.taskSettings,
          warn(message) {
            try {
              observer.warn(message);
            } catch {
              // A broken observer must not take a connection pool down with it.
            }
          },
        },
        observer,
      );
    }
    return this.engine;
  }

  trackTasks(settled: Promise<void>): void {
    this.running.add(settled);
    settled.then(
      () => this.running.delete(settled),
      () => this.running.delete(settled),
    );
  }

  get runningTaskRuns(): number {
    return this.running.size;
  }

  /** Resolves when no task run of this application is left (runs may start while waiting). */
  async tasksSettled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  async close(): Promise<void> {
    const engine = this.engine;
    this.engine = null;
    if (engine !== null) await engine.close();
  }
}

function endpointsReadingUploads(application: Application, kinds: TaskKinds): ReadonlySet<Endpoint> {
  const own = (endpoint: Endpoint) => endpoint.tasks.some((task) => kinds.of(task).readsUploads(task));
  const readers = new Set<Endpoint>();
  for (const endpoint of application.endpoints) {
    // Forward chains are short and acyclic (the compiler refuses cycles); `seen` bounds them anyway.
    const seen = new Set<Endpoint>();
    const pending = [endpoint];
    while (pending.length > 0) {
      const next = pending.pop()!;
      if (seen.has(next)) continue;
      seen.add(next);
      if (own(next)) {
        readers.add(endpoint);
        break;
      }
      for (const success of next.successes) {
        if (success.action.kind !== 'forward') continue;
        const target = application.endpointsByName.get(success.action.endpoint);
        if (target !== undefined) pending.push(target);
      }
    }
  }
  return readers;
}
