// The JSON document of docs/dry-run.md, "For scripts": exactly its keys, so scripts can rely on them.
import type { Plan, TaskPlan } from './model.js';

export function formatPlanJson(plan: Plan): string {
  const document = {
    endpoints: plan.endpoints.map((endpoint) => ({
      name: endpoint.name,
      response: { kind: endpoint.response.kind, status: endpoint.response.status },
      tasks: endpoint.tasks.map((task) => taskJson(task, plan.simulation !== null)),
      stages: endpoint.stages,
      // Only for an endpoint that has any: documents of others keep exactly their keys.
      ...(endpoint.protections === null ? {} : { protections: endpoint.protections }),
      // Likewise <signature> and <handshake>.
      ...(endpoint.webhook === null ? {} : { webhook: endpoint.webhook }),
      ...(endpoint.deduplication === null ? {} : { deduplication: endpoint.deduplication }),
      // Only with --body or --header, likewise.
      ...(endpoint.boundParameters === null
        ? {}
        : { parameters: endpoint.boundParameters.map(({ name, value, source, isDefault }) => ({ name, value, source, default: isDefault })) }),
    })),
  };
  return JSON.stringify(document, null, 2) + '\n';
}

function taskJson(task: TaskPlan, simulated: boolean): Record<string, unknown> {
  const json: Record<string, unknown> = {
    id: task.id,
    kind: task.kind,
    line: task.line,
    dependsOn: task.dependsOn,
    inputs: task.inputs,
    outputs: task.outputs,
    condition: task.condition,
    ignoreIfError: task.ignoreIfError,
    willRun: simulated ? task.willRun : null,
  };
  if (simulated && task.willRun !== false) {
    if (task.detail !== null) json[task.detail.member] = task.detail.json;
  }
  return json;
}
