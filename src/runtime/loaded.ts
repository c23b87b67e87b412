// One compiled application made ready to serve: secret keys expanded, task services created
// on first use, task runs tracked so that shutdown and reloads can wait for them.

import type { Application } from '../compiler/ast.js';
import { SYSTEM_PARAMETERS } from '../template/types.js';
import { resolveSecretKeys } from './hash.js';
import type { RuntimeObserver } from './observer.js';
import type { PipelineContext } from './pipeline.js';
import { createTaskServices, type TaskServices } from './task-runner.js';
import type { HostAllowlist } from '../tasks/host-allowlist.js';

export class LoadedApplication implements PipelineContext {
  readonly secretKeys: readonly Buffer[] | null;
  readonly endpointsByName: Application['endpointsByName'];
  private services: TaskServices | null = null;
  private readonly running = new Set<Promise<void>>();

  constructor(
    readonly application: Application,
    readonly env: Readonly<Record<string, string | undefined>>,
    readonly observer: RuntimeObserver,
    readonly upstreamTimeoutMs: number,
    private readonly smtpUrl: string | undefined,
    private readonly allowedTaskHosts: HostAllowlist | null = null,
  ) {
    this.endpointsByName = application.endpointsByName;
    const system = Object.fromEntries(SYSTEM_PARAMETERS.map((name) => [name, ''])) as Record<(typeof SYSTEM_PARAMETERS)[number], string>;
    this.secretKeys = application.security === null ? null : resolveSecretKeys(application.security, { parameters: new Map(), system, env });
  }

  taskServices(): TaskServices {
    if (this.services === null) {
      this.services = createTaskServices({
        application: this.application,
        observer: this.observer,
        env: this.env,
        ...(this.smtpUrl !== undefined ? { smtpUrl: this.smtpUrl } : {}),
        allowedHosts: this.allowedTaskHosts,
      });
    }
    return this.services;
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
    const services = this.services;
    this.services = null;
    if (services !== null) await services.close();
  }
}
