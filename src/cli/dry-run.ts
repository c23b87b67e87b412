// `endpoint-service dry-run`: the task plan of each endpoint, and with --param a simulated
// request, without any network or SMTP I/O. The plan goes to stdout; diagnostics, warnings
// and the reasons a simulated request fails go to stderr (docs/dry-run.md, "For scripts").
import type { ChalkInstance } from 'chalk';
import { compileApplication, type Application, type Endpoint } from '../compiler/index.js';
import { TASK_KINDS } from '../tasks/registry.js';
import { closest } from '../compiler/suggest.js';
import { chalkFor, useColor } from './color.js';
import type { ExitCode } from './action.js';
import { formatDiagnosticsText, summaryLine } from './formatters/text.js';
import type { Plan } from './plan/model.js';
import { buildPlan, type PlanOptions } from './plan/simulate.js';
import { NO_SOURCES, type RequestSources } from '../runtime/sources.js';
import { simulatedRequest, type RequestOptions } from './simulated-request.js';
import { formatPlanDot } from './plan/format-dot.js';
import { formatPlanJson } from './plan/format-json.js';
import { formatPlanMermaid } from './plan/format-mermaid.js';
import { formatPlanText } from './plan/format-text.js';
import type { CommandIo } from './io.js';
import type { PlanFormat } from './plan/format-names.js';

export interface DryRunOptions extends RequestOptions {
  readonly endpoint: string[];
  readonly param: [string, string][] | undefined;
  readonly format: PlanFormat;
}

/** Warnings and errors on stderr, colored as the terminal allows. */
function stderrLines(io: CommandIo) {
  const err = chalkFor(io.stderr, io.env);
  return {
    warn: (message: string) => io.stderr.write(`${err.yellow('warning')}: ${message}\n`),
    fail: (message: string) => io.stderr.write(`${err.red('error')}: ${message}\n`),
  };
}

export function dryRun(file: string, options: DryRunOptions, io: CommandIo): ExitCode {
  const stderrColor = useColor(io.stderr, io.env);
  const { warn, fail } = stderrLines(io);

  const compiled = compileApplication(file, { mode: 'dry-run', kinds: TASK_KINDS.list, env: io.env, keepSourceTexts: true });
  if (compiled.unreadable !== null) {
    fail(compiled.unreadable);
    return 2;
  }
  if (compiled.application === null || compiled.errorCount > 0) {
    io.stderr.write(formatDiagnosticsText(compiled.diagnostics, { color: stderrColor, sourceTexts: compiled.sourceTexts }));
    io.stderr.write(summaryLine(compiled.errorCount, compiled.warningCount) + '\n');
    return 1;
  }
  const application = compiled.application;
  if (compiled.diagnostics.length > 0) io.stderr.write(formatDiagnosticsText(compiled.diagnostics, { color: stderrColor, sourceTexts: compiled.sourceTexts }));

  const endpoints = selectedEndpoints(application, options.endpoint, file, fail);
  if (endpoints === null) return 2;

  let parameters: Map<string, string[]> | null = null;
  if (options.param !== undefined || options.body !== undefined || options.header !== undefined || options.contentType !== undefined) {
    parameters = new Map();
    for (const [name, value] of options.param ?? []) parameters.set(name, [...(parameters.get(name) ?? []), value]);
  }
  let sources: RequestSources = NO_SOURCES;
  let delivery: PlanOptions['delivery'];
  if (parameters !== null && (options.body !== undefined || options.header !== undefined || options.contentType !== undefined)) {
    const given = new Map(parameters);
    const request = simulatedRequest(
      options,
      parameters,
      endpoints.every((e) => e.keepsRequestBody),
    );
    if (request.kind === 'usage') {
      fail(request.message);
      return 2;
    }
    if (request.kind === 'refused') {
      // Refused before any endpoint decides, as serve refuses it.
      fail(`the request fails with status ${request.status}: ${request.detail}`);
      return 1;
    }
    sources = request.sources;
    delivery = { body: request.body, headers: request.headers, given, raw: request.raw };
  }

  const plan = buildPlan(application, { endpoints, parameters, sources, ...(delivery === undefined ? {} : { delivery }), env: io.env, kinds: TASK_KINDS });
  reportIgnored(plan, warn);
  if (options.format !== 'text') for (const endpoint of plan.endpoints) for (const note of endpoint.notes) warn(note);

  const failed = reportFailures(plan, fail);

  io.stdout.write(render(plan, options.format, chalkFor(io.stdout, io.env)));
  return failed ? 1 : 0;
}

/** The endpoints --endpoint names (all without it); null after saying which of them there is none of. */
function selectedEndpoints(application: Application, names: readonly string[], file: string, fail: (message: string) => void): readonly Endpoint[] | null {
  if (names.length === 0) return application.endpoints;
  const unknown = names.filter((name) => !application.endpointsByName.has(name));
  if (unknown.length > 0) {
    for (const name of unknown) {
      const suggestion = closest(name, application.endpointsByName.keys());
      fail(
        `there is no endpoint "${name}" in ${file}.${suggestion === undefined ? ` ${endpointList(application.endpoints)}` : ` Did you mean "${suggestion}"?`}`,
      );
    }
    return null;
  }
  const wanted = new Set(names);
  return application.endpoints.filter((e) => wanted.has(e.name));
}

/** Says each request and task of the plan that would fail; whether any would. */
function reportFailures(plan: Plan, fail: (message: string) => void): boolean {
  let failed = false;
  for (const endpoint of plan.endpoints) {
    if (endpoint.failure !== null) {
      failed = true;
      const via = endpoint.failure.endpoint === endpoint.name ? '' : ` (in forwarded endpoint "${endpoint.failure.endpoint}")`;
      fail(`endpoint "${endpoint.name}"${via}: the request fails with status ${endpoint.failure.status}: ${endpoint.failure.detail}`);
    }
    for (const task of endpoint.tasks) {
      if (task.failure === null) continue;
      failed = true;
      fail(`endpoint "${endpoint.name}", task "${task.id}" would fail: ${task.failure}`);
    }
  }
  return failed;
}

function render(plan: Plan, format: PlanFormat, color: ChalkInstance): string {
  switch (format) {
    case 'text':
      return formatPlanText(plan, color);
    case 'json':
      return formatPlanJson(plan);
    case 'mermaid':
      return formatPlanMermaid(plan);
    case 'dot':
      return formatPlanDot(plan);
  }
}

/** One warning per ignored name, listing the endpoints that do not declare it. */
function reportIgnored(plan: Plan, warn: (message: string) => void): void {
  const byName = new Map<string, { endpoints: string[]; suggestion: string | null }>();
  for (const endpoint of plan.endpoints) {
    for (const { name, suggestion } of endpoint.ignoredParameters) {
      const entry = byName.get(name) ?? { endpoints: [], suggestion: null };
      entry.endpoints.push(endpoint.name);
      entry.suggestion ??= suggestion;
      byName.set(name, entry);
    }
  }
  for (const [name, { endpoints, suggestion }] of byName) {
    const which = endpoints.length === 1 ? `endpoint "${endpoints[0]}"` : `endpoints ${endpoints.map((e) => `"${e}"`).join(', ')}`;
    warn(`parameter "${name}" is not declared by ${which} and is ignored, as serve would.${suggestion === null ? '' : ` Did you mean "${suggestion}"?`}`);
  }
}

/** Without a close name: the names there are, the first few of a large application. */
function endpointList(endpoints: readonly Endpoint[]): string {
  const SHOWN = 10;
  if (endpoints.length === 0) return 'It has no endpoints.';
  const names = endpoints.slice(0, SHOWN).map((e) => `"${e.name}"`);
  const more = endpoints.length > SHOWN ? ` and ${endpoints.length - SHOWN} more` : '';
  return `Its endpoints: ${names.join(', ')}${more}.`;
}
