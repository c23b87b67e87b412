// buildPlan on compiled fixtures: the cases where a simulation can only say "it depends".
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileApplication } from '../../src/compiler/index.js';
import { TASK_KINDS } from '../../src/tasks/registry.js';
import { buildPlan } from '../../src/cli/plan/simulate.js';

const FILE = fileURLToPath(new URL('../../fixtures/dry-run/deferred/endpoints.xml', import.meta.url));

function plan(parameters: Record<string, string[]>, env: Record<string, string> = {}) {
  const compiled = compileApplication(FILE, { kinds: TASK_KINDS.list, mode: 'dry-run', env });
  expect(compiled.errorCount, JSON.stringify(compiled.diagnostics)).toBe(0);
  const application = compiled.application!;
  return buildPlan(application, { endpoints: application.endpoints, parameters: new Map(Object.entries(parameters)), env, kinds: TASK_KINDS });
}

const endpoint = (p: ReturnType<typeof plan>, name: string) => p.endpoints.find((e) => e.name === name)!;

describe('buildPlan', () => {
  it('reports a refused redirect of a response built after the tasks, and the tasks still run', () => {
    const e = endpoint(plan({ to: ['https://evil.example/'] }), 'redirect-after');
    expect(e.failure).toEqual({ detail: 'the redirect target is not in the whitelist', status: 400, endpoint: 'redirect-after' });
    expect(e.tasks[0]!.willRun).toBe(true);
    expect((e.tasks[0]!.detail?.json as { url: string } | undefined)?.url).toBe('https://a.example/notify');
  });

  it('decides a condition on ${env:...} with the real value but never shows it', () => {
    expect(endpoint(plan({}, { FEATURE: 'on' }), 'secret-condition').tasks[0]!.willRun).toBe(true);
    expect(endpoint(plan({}, { FEATURE: 'off' }), 'secret-condition').tasks[0]!.willRun).toBe(false);
    const unset = endpoint(plan({}), 'secret-condition').tasks[0]!;
    expect(unset.willRun).toBeNull();
    expect(unset.willRunReason).toMatch(/FEATURE/);
  });

  it('plans without simulation: nothing decided, nothing expanded', () => {
    const compiled = compileApplication(FILE, { kinds: TASK_KINDS.list, mode: 'dry-run', env: {} });
    const p = buildPlan(compiled.application!, { endpoints: compiled.application!.endpoints, parameters: null, env: {}, kinds: TASK_KINDS });
    expect(p.simulation).toBeNull();
    for (const e of p.endpoints) {
      expect(e.responseChosen).toBe(false);
      for (const t of e.tasks) expect([t.willRun, t.detail]).toEqual([null, null]);
    }
  });
});
