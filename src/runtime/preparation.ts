// Before a request's first side effect (the first task, a response-from-url request, a forward's
// tasks), every task that will run and whose inputs are all known is prepared exactly as it will
// be sent. A value of the request that cannot be used (a line break in a header, no email
// address where one is needed) then refuses the request with 400 naming the parameter, before a
// CRM was written or a mail sent; a configuration that cannot be used answers 500. serve hands
// the prepared values to the scheduler, which sends them as they are; dry-run calls the same
// function, so it gives the same answer for the same parameters.
//
// Tasks that wait for intermediate values, or whose condition does, are prepared when they
// become runnable, as before; so is a task whose template reads a value this process does not
// have (dry-run: an unset variable).

import type { Application, Endpoint, Task } from '../compiler/ast.js';
import { describeError } from '../errors.js';
import type { TaskRequest } from '../tasks/kind.js';
import type { TaskKinds } from '../tasks/registry.js';
import type { TaskSettings } from '../tasks/settings.js';
import { evaluateCondition } from '../template/condition.js';
import { MissingValueError, usesIntermediate } from '../template/expand.js';
import type { Condition } from '../template/types.js';
import { unsafeValueFailure, type ActionFailure, type Decision, type Proceed } from './decision.js';
import type { RawBody, Upload } from '../upload.js';

/** Prepared values by endpoint (a forward chain has several) and task id. */
export type PreparedTasks = ReadonlyMap<Endpoint, ReadonlyMap<string, unknown>>;

export type Preparation =
  { readonly ok: true; readonly prepared: PreparedTasks } | { readonly ok: false; readonly endpoint: Endpoint; readonly failure: ActionFailure };

export interface PreparationInput {
  readonly kinds: TaskKinds;
  readonly application: Application;
  readonly uploads: readonly Upload[];
  /** The request body as received, when its endpoint keeps it. */
  readonly body: RawBody | null;
  /** As the task engine will run the tasks (LoadedApplication.taskSettings). */
  readonly settings: TaskSettings;
}

export const NOTHING_PREPARED: PreparedTasks = new Map();

/** Prepares the tasks of `decision` and of the endpoints it forwards to before anything runs. */
export function prepareBeforeSideEffects(input: PreparationInput, decision: Proceed): Preparation {
  const prepared = new Map<Endpoint, Map<string, unknown>>();
  for (let step: Decision | null = decision; step !== null && step.kind === 'proceed'; step = step.response?.kind === 'forward' ? step.response.target : null) {
    const { endpoint, scope } = step;
    if (step.tasks.length === 0) continue;
    const request: TaskRequest = {
      separator: endpoint.separator,
      uploads: input.uploads,
      body: input.body,
      application: input.application,
    };
    const values = new Map<string, unknown>();
    for (const task of step.tasks) {
      if (task.inputs.length > 0 || !runsFor(task.condition, step)) continue;
      try {
        values.set(task.id, input.kinds.of(task).prepare(task, scope, request, input.settings));
      } catch (error) {
        if (error instanceof MissingValueError) continue;
        return { ok: false, endpoint, failure: refusal(error, task) };
      }
    }
    prepared.set(endpoint, values);
  }
  return { ok: true, prepared };
}

/** Whether the task runs, when its condition is decided by the request alone; false too when only the run can tell. */
function runsFor(condition: Condition | null, decision: Proceed): boolean {
  if (condition === null) return true;
  if (usesIntermediate(condition.left) || (condition.kind === 'compare' && usesIntermediate(condition.right))) return false;
  try {
    return evaluateCondition(condition, decision.scope, decision.endpoint.separator);
  } catch {
    // The scheduler evaluates it again and reports the failure as the task's.
    return false;
  }
}

/** 400 naming the parameters whose values cannot be used; 500 when the configuration alone is to blame. */
function refusal(error: unknown, task: Task): ActionFailure {
  return unsafeValueFailure(error, `task "${task.id}" cannot be prepared: ${describeError(error)}`);
}
