// Task writes reach a store out of order (a worker's `running` may land after its `succeeded`,
// and either may land before the delivery itself), so a store keeps, per task, the latest state
// that does not move a finished task back to an unfinished one.

import type { TaskRecord, TaskState } from './record.js';

const TERMINAL: ReadonlySet<TaskState> = new Set<TaskState>(['succeeded', 'failed', 'skipped', 'not-started', 'delivery-unknown']);

/** Whether a task in `state` has ended: nothing but another ended state may replace it. */
export function isTerminal(state: TaskState): boolean {
  return TERMINAL.has(state);
}

/** Whether `incoming` replaces `stored`: always, unless `stored` has ended and `incoming` has not. */
export function replaces(stored: TaskRecord, incoming: TaskRecord): boolean {
  return !(isTerminal(stored.state) && !isTerminal(incoming.state));
}

/** The record's own tasks with the task writes merged over them; `written` in the order first written, so new ids keep that order. */
export function mergeTasks(own: readonly TaskRecord[], written: readonly TaskRecord[]): TaskRecord[] {
  const merged = [...own];
  for (const task of written) {
    const at = merged.findIndex((t) => t.id === task.id);
    if (at < 0) merged.push(task);
    else if (replaces(merged[at]!, task)) merged[at] = task;
  }
  return merged;
}
