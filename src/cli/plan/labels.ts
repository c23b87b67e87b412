// Short labels shared by the text and graph formats, so every format names things alike.
import type { EndpointPlan, TaskPlan } from './model.js';

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
  return `response: ${endpoint.failure !== null ? 'fails, ' : ''}${r.status ?? '?'} ${r.kind}`;
}

