// The dependency graph as a Mermaid flowchart: one subgraph per endpoint, edges labelled with
// why they exist (after, value names). Node ids are positional, so any task id is safe.
import { reason, responseEdges, responseLabel, taskLabel } from './labels.js';
import type { Plan } from './model.js';

export function formatPlanMermaid(plan: Plan): string {
  const out = ['flowchart LR'];
  const styled: { id: string; cls: string }[] = [];
  plan.endpoints.forEach((endpoint, e) => {
    const node = (taskId: string) => `e${e}_t${endpoint.tasks.findIndex((t) => t.id === taskId)}`;
    out.push(`  subgraph e${e}["${label(endpoint.name)}"]`);
    out.push(`    direction LR`);
    out.push(`    e${e}_response(["${label(responseLabel(endpoint))}"])`);
    endpoint.tasks.forEach((task, t) => {
      out.push(`    e${e}_t${t}["${label(taskLabel(task))}"]`);
      if (plan.simulation !== null) styled.push({ id: `e${e}_t${t}`, cls: task.failure !== null ? 'fails' : task.willRun === true ? 'runs' : task.willRun === false ? 'skipped' : 'maybe' });
    });
    for (const edge of endpoint.edges) out.push(`    ${node(edge.from)} -->|"${label(reason(edge.after, edge.values))}"| ${node(edge.to)}`);
    for (const edge of responseEdges(endpoint)) {
      const from = edge.from === null ? `e${e}_response` : node(edge.from);
      const to = edge.to === null ? `e${e}_response` : node(edge.to);
      out.push(`    ${from} ${edge.waits ? '-.->' : '==>'}|"${label(edge.label)}"| ${to}`);
    }
    out.push('  end');
  });
  if (styled.length > 0) {
    out.push('  classDef runs stroke:#2e7d32,stroke-width:2px');
    out.push('  classDef skipped stroke-dasharray:4 4,color:#888');
    out.push('  classDef maybe stroke:#f9a825,stroke-dasharray:2 2');
    out.push('  classDef fails stroke:#c62828,stroke-width:2px');
    for (const cls of ['runs', 'skipped', 'maybe', 'fails']) {
      const ids = styled.filter((s) => s.cls === cls).map((s) => s.id);
      if (ids.length > 0) out.push(`  class ${ids.join(',')} ${cls}`);
    }
  }
  return out.join('\n') + '\n';
}

/** Mermaid strings in quotes: entity codes for quotes, <br/> for line breaks. */
function label(text: string): string {
  return text
    .replace(/&/g, '#amp;')
    .replace(/"/g, '#quot;')
    .replace(/</g, '#lt;')
    .replace(/>/g, '#gt;')
    .replace(/\n/g, '<br/>');
}
