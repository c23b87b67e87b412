// A per-endpoint fingerprint: the SHA-256 of a canonical JSON of what a queued run of the endpoint
// depends on (its parameters, tasks and task graph, and the mail settings), positions and absolute paths left out, so that a comment, a moved line or a
// checkout in another directory does not count as a change. A job records the fingerprint of
// the configuration it was enqueued under; a worker compares it with its own.

import { createHash } from 'node:crypto';
import type { Application, Endpoint, ParameterDeclaration, Task } from '../compiler/ast.js';

/** Keys whose values say where something is written, not what it does. */
const LEFT_OUT: ReadonlySet<string> = new Set(['position', 'absolutePath', 'directory', 'staticDirectory', 'file', 'parametersByName']);

const cache = new WeakMap<Endpoint, string>();

export function endpointFingerprint(application: Application, endpoint: Endpoint): string {
  let fingerprint = cache.get(endpoint);
  if (fingerprint === undefined) {
    fingerprint = createHash('sha256')
      .update(
        canonical({
          name: endpoint.name,
          parameters: endpoint.parameters.map(fingerprinted),
          separator: endpoint.separator,
          tasks: endpoint.tasks.map(fingerprintedTask),
          graph: endpoint.taskGraph,
          email: application.email,
        }),
      )
      .digest('hex')
      .slice(0, 32);
    cache.set(endpoint, fingerprint);
  }
  return fingerprint;
}

/** A parameter read by its name is fingerprinted as before parameters had sources, so jobs queued by an older version still match. */
function fingerprinted(parameter: ParameterDeclaration): object {
  if (parameter.source.kind !== 'name') return parameter;
  const { source: _, ...rest } = parameter;
  return rest;
}

/** An output's JSONPath by its text alone, as before outputs carried a compiled query, so jobs queued by an older version still match. */
function fingerprintedTask(task: Task): object {
  if (!task.outputs.some((output) => output.selector.kind === 'jsonpath')) return task;
  return {
    ...task,
    outputs: task.outputs.map((output) =>
      output.selector.kind === 'jsonpath' ? { ...output, selector: { kind: output.selector.kind, path: output.selector.path } } : output,
    ),
  };
}

/** Whether a changed endpoint must fail its pending jobs: default ids (`task-N`) move when a task is inserted. */
export function hasPositionalTaskIds(endpoint: Endpoint): boolean {
  return endpoint.tasks.some((task) => !task.explicitId);
}

function canonical(value: unknown, seen = new Set<unknown>()): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'bigint') return JSON.stringify(String(value));
  if (typeof value === 'function' || typeof value === 'symbol') return 'null';
  if (value instanceof RegExp) return JSON.stringify(String(value));
  if (seen.has(value)) return '"<cycle>"';
  seen.add(value);
  let text: string;
  if (value instanceof Map) {
    const entries = [...value.entries()].map(
      ([k, v]) => [typeof k === 'object' && k !== null && 'name' in k ? String((k as { name: unknown }).name) : String(k), canonical(v, seen)] as const,
    );
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    text = `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
  } else if (value instanceof Set) {
    text = `[${[...value]
      .map((v) => canonical(v, seen))
      .sort()
      .join(',')}]`;
  } else if (Array.isArray(value) || ArrayBuffer.isView(value)) {
    text = `[${Array.from(value as ArrayLike<unknown>, (v) => canonical(v, seen)).join(',')}]`;
  } else {
    const keys = Object.keys(value as object)
      .filter((k) => !LEFT_OUT.has(k))
      .sort();
    text = `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k], seen)}`).join(',')}}`;
  }
  seen.delete(value);
  return text;
}
