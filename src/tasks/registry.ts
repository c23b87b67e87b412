// The task kinds this service knows. Adding a kind: a folder beside these two, exporting one
// TaskKind, and one line here (docs/architecture.md, "Adding a task kind").

import type { Task } from '../compiler/ast.js';
import { emailKind } from './email/index.js';
import { httpRequestKind } from './http-request/index.js';
import type { AnyTaskKind } from './kind.js';

export class TaskKinds {
  private readonly byName: ReadonlyMap<string, AnyTaskKind>;

  constructor(readonly list: readonly AnyTaskKind[]) {
    this.byName = new Map(list.map((k) => [k.kind, k]));
    const classes = new Set<string>();
    for (const kind of list) {
      // A kind that runs after everything else has no dependant left to hand values to.
      if (kind.deliversLast && kind.hasOutputs) throw new Error(`task kind "${kind.kind}" delivers last, so it cannot have outputs`);
      for (const name of kind.classNames) {
        if (classes.has(name)) throw new Error(`the task class "${name}" is registered twice`);
        classes.add(name);
      }
    }
    if (this.byName.size !== list.length) throw new Error('a task kind name is registered twice');
  }

  /** The kind that compiled `task`: every task of an Application compiled with this registry has one. */
  of(task: Task): AnyTaskKind {
    const kind = this.byName.get(task.kind);
    if (kind === undefined) throw new Error(`no task kind "${task.kind}" is registered (task "${task.id}")`);
    return kind;
  }

  /** A registry with more kinds (tests register kinds of their own this way). */
  with(...kinds: readonly AnyTaskKind[]): TaskKinds {
    return new TaskKinds([...this.list, ...kinds]);
  }
}

export const TASK_KINDS = new TaskKinds([httpRequestKind, emailKind]);
