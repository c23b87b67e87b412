// Short labels shared by the text and graph formats, so every format names things alike.
import type { EndpointPlan, TaskPlan } from './model.js';
import { protectionSummary } from './protections.js';
import { webhookSummary } from './webhook.js';

/** Why an edge exists: `after`, `value customer-id`, or both. */
export function reason(after: boolean, values: readonly string[]): string {
  const parts = after ? ['after'] : [];
  if (values.length > 0) parts.push(`${values.length === 1 ? 'value' : 'values'} ${values.join(', ')}`);
  return parts.join(', ');
}

export function taskLabel(task: TaskPlan): string {
  const lines = [task.id, task.className];
  if (task.condition !== null) lines.push(`if ${task.condition}`);
  return lines.join('\n');
}

export function responseLabel(endpoint: EndpointPlan): string {
  const r = endpoint.response;
  const label = `response: ${endpoint.failure !== null ? 'fails, ' : ''}${r.status ?? '?'} ${r.kind}`;
  const checked = endpoint.webhook === null ? label : `${label}\nafter ${webhookSummary(endpoint.webhook)}`;
  return endpoint.protections === null ? checked : `${checked}\nafter ${protectionSummary(endpoint.protections)}`;
}

/**
 * Where the response stands among the tasks. With tasks="background" it is sent first and the
 * tasks with no dependency start after it; with tasks="wait" it is sent once every task has
 * ended, so it follows the tasks nothing else waits for. A response built from task results
 * (waitsFor) is drawn from those tasks instead, labelled so.
 */
export function responseEdges(
  endpoint: EndpointPlan,
): { readonly from: string | null; readonly to: string | null; readonly label: string; readonly waits: boolean }[] {
  if (endpoint.tasks.length === 0) return [];
  if (endpoint.tasksMode === 'background') {
    return endpoint.tasks.filter((t) => t.dependsOn.length === 0).map((t) => ({ from: null, to: t.id, label: 'then, in the background', waits: false }));
  }
  const waitsFor = new Set(endpoint.response.waitsFor);
  const waitedOn = new Set(endpoint.edges.map((e) => e.from));
  const edges = [...waitsFor].map((id) => ({ from: id, to: null, label: 'response waits', waits: true }));
  for (const task of endpoint.tasks) {
    if (!waitedOn.has(task.id) && !waitsFor.has(task.id)) edges.push({ from: task.id, to: null, label: 'then', waits: false });
  }
  return edges;
}
