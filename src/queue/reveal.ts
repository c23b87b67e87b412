// `jobs show --reveal`: a job's bound parameters and its tasks' error texts (which may hold
// values: a path, a recipient), opened with ENDPOINT_SERVICE_QUEUE_KEY. Parameter values the
// configuration treats as secrets (written into an Authorization header or basic authentication:
// TaskKind.secretParameters) print as ***, as dry-run prints them. Which those are is decided by
// the configuration that queued the job, and sealed with it: `jobs` has no endpoints.xml, and the
// one of today may differ.

import type { Endpoint } from '../compiler/ast.js';
import type { TaskKinds } from '../tasks/registry.js';
import { taskErrorText, unsealRun, type QueuedRun, type RunProgress } from './job.js';
import type { QueueKey } from './seal.js';

export const SECRET_MASK = '***';

const cache = new WeakMap<Endpoint, readonly string[]>();

/** The endpoint's parameters that some task of it keeps secret; computed once per compiled endpoint. */
export function secretParameterNames(endpoint: Endpoint, kinds: TaskKinds): readonly string[] {
  let names = cache.get(endpoint);
  if (names === undefined) {
    names = [...new Set(endpoint.tasks.flatMap((task) => kinds.of(task).secretParameters?.(task) ?? []))];
    cache.set(endpoint, names);
  }
  return names;
}

export interface RevealedParameters {
  /** By name, in the endpoint's order; secrets as ***. */
  readonly parameters: Record<string, string>;
  /** The names whose values are masked. */
  readonly masked: readonly string[];
  /** False for a job queued before the secret names were sealed with it: then every value is masked. */
  readonly secretsKnown: boolean;
}

/** Opens the job's sealed run; throws SealError when none of `keys` opens it. */
export function revealParameters(keys: readonly QueueKey[], jobId: string, data: QueuedRun): RevealedParameters {
  const run = unsealRun(keys, jobId, data.sealed);
  const secret = run.secret === undefined ? null : new Set(run.secret);
  const masked = run.parameters.filter(([name]) => secret === null || secret.has(name)).map(([name]) => name);
  // fromEntries: a parameter may be called __proto__.
  const parameters = Object.fromEntries(run.parameters.map(([name, value]) => [name, masked.includes(name) ? SECRET_MASK : value]));
  return { parameters, masked, secretsKnown: secret !== null };
}

/** The error texts of a job's tasks, opened (or as an earlier version stored them in clear); throws SealError when none of `keys` opens one. */
export function revealErrors(keys: readonly QueueKey[], jobId: string, progress: RunProgress): Record<string, string> {
  const texts: Record<string, string> = {};
  for (const [taskId, record] of Object.entries(progress.tasks)) {
    const text = taskErrorText(keys, jobId, taskId, record);
    if (text !== undefined) texts[taskId] = text;
  }
  return texts;
}
