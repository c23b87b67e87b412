// What the compiler needs to know of a task kind. The kinds themselves live in src/tasks/,
// above the compiler; the command that compiles hands their registry in (CompileOptions.kinds),
// so the compiler never imports a kind and a test can compile with a kind of its own.

import type { Task } from './ast.js';
import type { CompileContext, ReadElement } from './context.js';
import type { NameScope } from './templates.js';
import type { XmlElement } from './xml.js';

export interface TaskKindSyntax<T extends Task = Task> {
  /** The registry's name for the kind, the `kind` of its tasks: `http-request`. */
  readonly kind: string;
  /** Every accepted `class` value; the first is the one messages suggest. */
  readonly classNames: readonly string[];
  /** Child elements of <task> that only this kind takes (after, inputs and outputs are everyone's). */
  readonly children: readonly string[];
  /** Whether its tasks may declare <output-intermediate-value>: only a kind with an answer to read. */
  readonly hasOutputs: boolean;
  /** Whether its tasks send mail, so the application needs SMTP settings (smtp-not-configured). */
  readonly sendsMail: boolean;
  /**
   * Whether the task uses the request body as received (HttpRequest <forward-request-body/>):
   * its endpoint then keeps the raw body and accepts any content type. Without it, no.
   */
  readsRequestBody?(task: T): boolean;
  /**
   * The kind's own elements. `base` holds everything common, already checked; return the task
   * (base plus the kind's fields, `kind` set), or null after reporting why it is invalid.
   */
  compile(ctx: CompileContext, read: ReadElement, scope: NameScope, base: Task, element: XmlElement): T | null;
}
