// The dependency graph for Graphviz: one cluster per endpoint, edges labelled with why they
// exist. Ids are quoted DOT strings, so any task id is safe.
import type { Plan } from './model.js';
import { reason, responseEdges, responseLabel, taskLabel } from './labels.js';

export function formatPlanDot(plan: Plan): string {
  const out = ['digraph plan {', '  rankdir=LR;', '  node [shape=box, fontname="Helvetica"];', '  edge [fontname="Helvetica", fontsize=10];'];
  plan.endpoints.forEach((endpoint, e) => {
    const node = (taskId: string) => quote(`${endpoint.name}/${taskId}`);
    out.push(`  subgraph ${quote(`cluster_${e}`)} {`);
    out.push(`    label=${quote(endpoint.name)};`);
    out.push(`    ${quote(`${endpoint.name}/:response`)} [label=${quote(responseLabel(endpoint))}, shape=oval];`);
    for (const task of endpoint.tasks) {
      const attributes = [`label=${quote(taskLabel(task))}`];
      if (plan.simulation !== null) attributes.push(...simulatedStyle(task.failure !== null, task.willRun));
      out.push(`    ${node(task.id)} [${attributes.join(', ')}];`);
    }
    for (const edge of endpoint.edges) out.push(`    ${node(edge.from)} -> ${node(edge.to)} [label=${quote(reason(edge.after, edge.values))}];`);
    const response = quote(`${endpoint.name}/:response`);
    for (const edge of responseEdges(endpoint)) {
      const from = edge.from === null ? response : node(edge.from);
      const to = edge.to === null ? response : node(edge.to);
      out.push(`    ${from} -> ${to} [${edge.waits ? 'style=dashed' : 'style=bold'}, label=${quote(edge.label)}];`);
    }
    out.push('  }');
  });
  out.push('}');
  return out.join('\n') + '\n';
}

function simulatedStyle(fails: boolean, willRun: boolean | null): string[] {
  if (fails) return ['color=red', 'penwidth=2'];
  if (willRun === true) return ['color=darkgreen', 'penwidth=2'];
  if (willRun === false) return ['style=dashed', 'fontcolor=gray50', 'color=gray50'];
  return ['style=dotted', 'color=orange'];
}

/** A DOT quoted string; line breaks become centred \n. */
function quote(text: string): string {
  return '"' + text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r?\n/g, '\\n') + '"';
}
