// The plan for people: per endpoint the response, then the tasks stage by stage with what each
// waits for and why, and, for a simulated request, exactly what would be sent.
import type { ChalkInstance } from 'chalk';
import type { TextLine } from '../../tasks/kind.js';
import type { BoundParameter, EndpointPlan, Plan, ResponsePlan, TaskPlan } from './model.js';
import { reason } from './labels.js';
import { protectionSummary } from './protections.js';
import { webhookSummary } from './webhook.js';
import { deduplicationDetail, deduplicationSummary } from './deduplication.js';
import { SIMULATED_REQUEST } from './simulate.js';
import { DEFAULT_TASK_TIMEOUT_MS, formatDuration } from '../../units.js';

export function formatPlanText(plan: Plan, c: ChalkInstance): string {
  const out: string[] = [];
  if (plan.simulation !== null) {
    const given = plan.simulation.parameters.map(([name, values]) => values.map((v) => `${name}=${printable(v)}`).join(', ')).join(', ');
    const { body, headers } = plan.simulation;
    const delivery = body !== undefined || headers !== undefined;
    out.push(c.bold('Simulated request: ') + (given !== '' ? given : delivery ? '(no --param)' : '(no parameters)'));
    if (body !== undefined) out.push(`  body ${body.file}: ${body.size} bytes, ${body.contentType}`);
    for (const [name, value] of headers ?? []) out.push(`  header ${name}: ${printable(value)}`);
    out.push(
      c.dim(
        `  environment ${plan.simulation.environment}, request-id ${SIMULATED_REQUEST.requestId}, client-ip ${SIMULATED_REQUEST.clientIp}, base-url ${SIMULATED_REQUEST.baseUrl}; nothing is sent`,
      ),
    );
    out.push('');
  }
  plan.endpoints.forEach((endpoint, i) => {
    if (i > 0) out.push('');
    out.push(...endpointText(endpoint, plan.simulation !== null, c));
  });
  return out.join('\n') + '\n';
}

function endpointText(endpoint: EndpointPlan, simulated: boolean, c: ChalkInstance): string[] {
  const out: string[] = [];
  out.push(`${c.bold.cyan(endpoint.name)} ${c.dim(`(line ${endpoint.line})`)}`);
  if (endpoint.webhook !== null) {
    out.push(`  webhook   ${webhookSummary(endpoint.webhook)}`);
    for (const check of endpoint.webhook.checks ?? []) {
      const mark =
        check.outcome === 'answered'
          ? c.green(`[${check.outcome}]`)
          : check.outcome === 'refused'
            ? c.red(`[${check.outcome}]`)
            : c.yellow(`[${check.outcome}]`);
      out.push(`    ${mark} ${check.check}: ${check.detail}`);
    }
  }
  if (endpoint.protections !== null) {
    out.push(`  protects  ${protectionSummary(endpoint.protections)}`);
    for (const check of endpoint.protections.checks ?? []) {
      const mark =
        check.outcome === 'passes'
          ? c.green(`[${check.outcome}]`)
          : check.outcome === 'not-checked'
            ? c.yellow(`[${check.outcome}]`)
            : c.red(`[${check.outcome}]`);
      out.push(`    ${mark} ${check.check}: ${check.detail}`);
    }
  }

  if (endpoint.deduplication !== null) {
    out.push(`  deduplicates  ${deduplicationSummary(endpoint.deduplication)}`);
    const detail = deduplicationDetail(endpoint.deduplication);
    out.push(`    ${c.yellow('[not-checked]')} ${detail ?? endpoint.deduplication.note}`);
  }

  if (endpoint.boundParameters !== null) out.push(...boundText(endpoint.boundParameters, c));
  if (endpoint.failure !== null) {
    const where = endpoint.failure.endpoint === endpoint.name ? '' : ` in forwarded endpoint ${endpoint.failure.endpoint}`;
    out.push(`  ${c.red.bold('request fails')}${where}: ${endpoint.failure.detail}`);
    out.push(`  response  ${status(endpoint.response, c)} ${endpoint.response.summary}`);
  } else if (endpoint.responses.length === 1) {
    out.push(`  response  ${responseLine(endpoint.response, c)}`);
    out.push(...expandedLines(endpoint.response));
  } else {
    // Every <success> in the order serve tries them; the one a simulated request gets is marked.
    endpoint.responses.forEach((r, i) => {
      const chosen = endpoint.responseChosen && r.line === endpoint.response.line && r.condition === endpoint.response.condition;
      const when = r.condition === null ? 'otherwise' : `if ${r.condition}`;
      const line = `${when}: ${responseLine(r, c)}`;
      out.push(`  ${i === 0 ? 'response' : '        '}  ${chosen ? `${line}  ${c.green('← chosen')}` : line}`);
      if (chosen) out.push(...expandedLines(endpoint.response));
    });
  }
  if (endpoint.responseNote !== null) out.push(`            ${c.yellow(endpoint.responseNote)}`);

  if (endpoint.tasks.length === 0) {
    out.push(`  tasks     ${c.dim('none')}`);
  } else {
    const mode = endpoint.tasksMode === 'background' ? 'run in the background after the response is sent' : 'run before the response is sent';
    const count = endpoint.stages.length;
    out.push(`  tasks     ${endpoint.tasks.length} in ${count} stage${count === 1 ? '' : 's'}, ${mode}`);
    const byId = new Map(endpoint.tasks.map((t) => [t.id, t]));
    endpoint.stages.forEach((stage, k) => {
      out.push(`  ${c.bold(`stage ${k + 1}`)}${stage.length > 1 ? c.dim('  (these run concurrently)') : ''}`);
      for (const id of stage) {
        const task = byId.get(id);
        if (task !== undefined) out.push(...taskText(endpoint, task, simulated, c));
      }
    });
  }
  for (const note of endpoint.notes) out.push(`  ${c.yellow('note')}: ${note}`);
  return out;
}

/** With --body or --header: each parameter's value and where it came from. */
function boundText(bound: readonly BoundParameter[], c: ChalkInstance): string[] {
  if (bound.length === 0) return [`  bound     ${c.dim('no parameters')}`];
  return bound.map((p, i) => {
    const from = p.isDefault ? 'default' : p.source.kind === 'jsonpath' ? p.source.path : p.source.kind === 'header' ? `header ${p.source.header}` : 'by name';
    return `  ${i === 0 ? 'bound' : '     '}     ${p.name} = ${printable(p.value)}  ${c.dim(`(${from})`)}`;
  });
}

function status(response: ResponsePlan, c: ChalkInstance): string {
  return response.status === null ? c.dim('(status from upstream)') : c.bold(String(response.status));
}

function responseLine(response: ResponsePlan, c: ChalkInstance): string {
  return `${status(response, c)} ${response.summary}${waits(response)}`;
}

/** The expanded target or body, unless the summary already shows it as is. */
function expandedLines(response: ResponsePlan): string[] {
  const expanded = response.expanded;
  return expanded === null || response.summary.includes(expanded) ? [] : indent(`→ ${expanded}`, 12);
}

function waits(response: ResponsePlan): string {
  return response.waitsFor.length === 0 ? '' : `, built after ${response.waitsFor.join(', ')}`;
}

function taskText(endpoint: EndpointPlan, task: TaskPlan, simulated: boolean, c: ChalkInstance): string[] {
  const out: string[] = [];
  let mark = '';
  if (simulated) {
    if (task.failure !== null) mark = c.red('[fails] ');
    else if (task.willRun === true) mark = c.green('[runs] ');
    else if (task.willRun === false) mark = c.dim('[skipped] ');
    else mark = c.yellow('[maybe] ');
  }
  const extras = [`line ${task.line}`];
  if (task.timeoutMs !== DEFAULT_TASK_TIMEOUT_MS) extras.push(`timeout ${formatDuration(task.timeoutMs)}`);
  if (task.retries > 0) extras.push(`${task.retries} ${task.retries === 1 ? 'retry' : 'retries'}`);
  out.push(`    ${mark}${c.bold(task.id)}  ${task.className}  ${c.dim(extras.join(', '))}`);

  for (const edge of endpoint.edges.filter((e) => e.to === task.id)) {
    out.push(`      waits for ${c.bold(edge.from)} ${c.dim(`(${reason(edge.after, edge.values)})`)}`);
  }
  if (task.condition !== null) out.push(`      if ${task.condition}`);
  if (task.outputs.length > 0) out.push(`      outputs ${task.outputs.join(', ')}`);
  if (task.ignoreIfError) out.push(`      ignore-if-error: a failure does not fail the request`);
  if (simulated && task.willRunReason !== null) out.push(`      ${c.dim(task.willRunReason)}`);
  if (task.failure !== null) out.push(`      ${c.red('would fail')}: ${task.failure}`);
  if (task.detail !== null) for (const line of task.detail.text) out.push(textLine(line, c));
  return out;
}

/** A line a task kind wrote for its description; an empty one stays empty, without indentation. */
function textLine(line: TextLine, c: ChalkInstance): string {
  if (line.head === undefined) return line.text === '' ? '' : ' '.repeat(line.indent) + line.text;
  const head = line.headStyle === 'dim' ? c.dim(line.head) : line.headStyle === 'bold' ? c.bold(line.head) : line.head;
  return ' '.repeat(line.indent) + head + (line.text === '' ? '' : ` ${line.text}`);
}

/** A value with control characters (a CR/LF being tried out) is shown quoted, escapes visible. */
function printable(value: string): string {
  return /[\u0000-\u001f\u007f]/.test(value) ? JSON.stringify(value) : value;
}

function indent(text: string, by: number): string[] {
  const pad = ' '.repeat(by);
  return text.split(/\r?\n/).map((line) => (line === '' ? '' : pad + line));
}
