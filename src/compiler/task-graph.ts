// The task graph of one endpoint: who waits for whom, and why; stages as longest-path levels.
// Built by the compiler (cycles are a configuration error) and read by dry-run and serve.

import { exact } from './retained.js';

/** Why `to` waits for `from`: an explicit <after>, intermediate values it consumes, or both. */
export interface TaskEdge {
  readonly from: string;
  readonly to: string;
  readonly after: boolean;
  readonly values: readonly string[];
}

export interface TaskGraph {
  /** Task ids in file order. */
  readonly order: readonly string[];
  /** Each dependency once, in the order first referenced. */
  readonly dependsOn: ReadonlyMap<string, readonly string[]>;
  readonly dependents: ReadonlyMap<string, readonly string[]>;
  readonly edges: readonly TaskEdge[];
  /** stages[k]: tasks whose longest dependency chain has k tasks before them, in file order. Empty when cyclic. */
  readonly stages: readonly (readonly string[])[];
  /** Each cycle once, as ids from a task back to itself (`a -> b -> a` is ['a','b','a']). */
  readonly cycles: readonly (readonly string[])[];
}

export interface TaskNode {
  readonly id: string;
  /** Ids from <after>, unknown ones already dropped by the caller or ignored here. */
  readonly after: readonly string[];
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
}

/**
 * Task graphs as the application keeps them: endpoints whose tasks have the same ids, orderings
 * and values (no tasks at all, most often, or the same steps copied from endpoint to endpoint)
 * share one graph, which is read-only. A graph of three tasks with its lookups is about a
 * kilobyte; one per endpoint was a sixth of a large application's memory.
 */
export class SharedTaskGraphs {
  private readonly graphs = new Map<string, TaskGraph>();

  /** `sharing` off (validate, which keeps nothing it compiles): each graph is built as asked. */
  constructor(private readonly sharing: boolean) {}

  of(tasks: readonly TaskNode[]): TaskGraph {
    if (!this.sharing) return buildTaskGraph(tasks);
    const key = JSON.stringify(tasks);
    let graph = this.graphs.get(key);
    if (graph === undefined) this.graphs.set(key, (graph = buildTaskGraph(tasks)));
    return graph;
  }
}

export function buildTaskGraph(tasks: readonly TaskNode[]): TaskGraph {
  const ids = new Set(tasks.map((t) => t.id));
  const producerOf = new Map<string, string>();
  for (const task of tasks) for (const out of task.outputs) if (!producerOf.has(out)) producerOf.set(out, task.id);

  const edges: TaskEdge[] = [];
  const dependsOn = new Map<string, string[]>();
  const dependents = new Map<string, string[]>();
  for (const task of tasks) {
    dependsOn.set(task.id, []);
    if (!dependents.has(task.id)) dependents.set(task.id, []);
  }
  for (const task of tasks) {
    const byProducer = new Map<string, { after: boolean; values: string[] }>();
    const note = (from: string) => {
      let e = byProducer.get(from);
      if (!e) byProducer.set(from, (e = { after: false, values: [] }));
      return e;
    };
    for (const a of task.after) if (ids.has(a)) note(a).after = true;
    for (const input of task.inputs) {
      const producer = producerOf.get(input);
      if (producer !== undefined) note(producer).values.push(input);
    }
    for (const [from, e] of byProducer) {
      edges.push({ from, to: task.id, after: e.after, values: exact(e.values) });
      dependsOn.get(task.id)!.push(from);
      dependents.get(from)!.push(task.id);
    }
  }

  const cycles = findCycles(tasks.map((t) => t.id), dependsOn);
  const stages = cycles.length > 0 ? [] : computeStages(tasks.map((t) => t.id), dependsOn);
  // Every endpoint keeps its graph while it is served: lists grown by push are copied to their
  // exact size (a grown list keeps room for 16), which matters with thousands of endpoints.
  const kept = (map: Map<string, string[]>) => new Map([...map].map(([id, list]) => [id, exact(list)] as const));
  return { order: tasks.map((t) => t.id), dependsOn: kept(dependsOn), dependents: kept(dependents), edges: exact(edges), stages: exact(stages.map((s) => exact(s))), cycles: exact(cycles) };
}

function computeStages(order: readonly string[], dependsOn: ReadonlyMap<string, readonly string[]>): string[][] {
  // Longest path to each task, without recursion (a chain of 100,000 tasks in reverse file order
  // is as deep): a task is settled once all it depends on are. The graph has no cycle here.
  const level = new Map<string, number>();
  for (const root of order) {
    const pending = [root];
    while (pending.length > 0) {
      const id = pending[pending.length - 1]!;
      if (level.has(id)) {
        pending.pop();
        continue;
      }
      let l = 0;
      let waiting = false;
      for (const d of dependsOn.get(id) ?? []) {
        const known = level.get(d);
        if (known === undefined) {
          pending.push(d);
          waiting = true;
        } else if (known + 1 > l) l = known + 1;
      }
      if (!waiting) {
        level.set(id, l);
        pending.pop();
      }
    }
  }
  const stages: string[][] = [];
  for (const id of order) {
    const l = level.get(id)!;
    while (stages.length <= l) stages.push([]);
    stages[l]!.push(id);
  }
  return stages;
}

/**
 * Iterative DFS over `dependsOn` (from each node to what must come before it); reports each
 * cycle closed by a back edge once, in run order, starting at its first node in `order`. Not
 * every elementary cycle: listing them all takes exponential time on a dense graph.
 */
export function findCycles(order: readonly string[], dependsOn: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, 'active' | 'done'>();
  const cycles: string[][] = [];
  const seen = new Set<string>();
  /** Place of each task in the file, made when the first cycle is found. */
  let place: ReadonlyMap<string, number> | null = null;
  for (const root of order) {
    if (state.has(root)) continue;
    const stack: { id: string; next: number }[] = [{ id: root, next: 0 }];
    const path: string[] = [root];
    state.set(root, 'active');
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      const deps = dependsOn.get(frame.id) ?? [];
      if (frame.next < deps.length) {
        const dep = deps[frame.next++]!;
        const s = state.get(dep);
        if (s === 'active') {
          // path from dep to frame.id, then back to dep; dependencies point backwards, so reverse for run order
          const cycle = path.slice(path.indexOf(dep)).reverse();
          place ??= new Map(order.map((id, i) => [id, i]));
          const rotated = rotateToFirst(cycle, place);
          const key = rotated.join('\u0000');
          if (!seen.has(key)) {
            seen.add(key);
            cycles.push([...rotated, rotated[0]!]);
          }
        } else if (s === undefined) {
          state.set(dep, 'active');
          path.push(dep);
          stack.push({ id: dep, next: 0 });
        }
      } else {
        state.set(frame.id, 'done');
        path.pop();
        stack.pop();
      }
    }
  }
  return cycles;
}

function rotateToFirst(cycle: string[], place: ReadonlyMap<string, number>): string[] {
  let best = 0;
  for (let i = 1; i < cycle.length; i++) if (place.get(cycle[i]!)! < place.get(cycle[best]!)!) best = i;
  return [...cycle.slice(best), ...cycle.slice(0, best)];
}
