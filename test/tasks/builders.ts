// Hand-built AST for task engine tests: templates split like the compiler splits them, each
// placeholder resolved against the names the test declares as intermediate values.
import { type Application, type EmailSettings, type Endpoint, type OutputSelector, type Task } from '../../src/compiler/ast.js';
import { compileJsonPath } from '../../src/compiler/json-path.js';
import type { EmailTask } from '../../src/tasks/email/types.js';
import type { HttpRequestTask } from '../../src/tasks/http-request/types.js';
import { SYSTEM_PARAMETERS, type Condition, type Escaping, type SystemParameter, type Template, type TemplatePart } from '../../src/template/types.js';
import { type Position } from '../../src/position.js';
import { buildTaskGraph } from '../../src/compiler/task-graph.js';
import type { RuntimeObserver, TaskOutcomeEvent } from '../../src/runtime/observer.js';
import type { ExpansionScope } from '../../src/template/expand.js';
import { parseTemplateSource } from '../../src/template/parse.js';
import { compileAuthorRegex, type AuthorRegex } from '../../src/compiler/regex.js';

export const at: Position = { file: 'endpoints.xml', line: 1, column: 1 };

/** An author regex compiled as the compiler compiles it (written as the author writes it, unanchored). */
export function regex(source: string): AuthorRegex {
  const compiled = compileAuthorRegex(source);
  if (compiled.kind !== 'compiled') throw new Error(`not a regex: ${source}`);
  return compiled.regex;
}

/** An output's selector as the compiler makes it: a JSONPath compiled (RFC 9535), an XPath as written. */
export function selector(kind: 'jsonpath' | 'xpath', path: string): OutputSelector {
  if (kind === 'xpath') return { kind, path };
  const compiled = compileJsonPath(path);
  if (!compiled.ok) throw new Error(`not a JSONPath: ${path}: ${compiled.problem}`);
  return { kind, path, query: compiled.query };
}

export function tpl(source: string, escaping: Escaping = 'none', intermediate: readonly string[] = []): Template {
  const parsed = parseTemplateSource(source);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const parts: TemplatePart[] = parsed.segments.map((s) => {
    if (s.kind === 'text') return { kind: 'literal', text: s.text };
    if (s.name.startsWith('env:')) return { kind: 'env', name: s.name.slice(4) };
    if (intermediate.includes(s.name)) return { kind: 'intermediate', name: s.name };
    if ((SYSTEM_PARAMETERS as readonly string[]).includes(s.name)) return { kind: 'system', name: s.name as SystemParameter };
    return { kind: 'parameter', name: s.name };
  });
  return { source, escaping, parts };
}

export function equals(left: string, right: string, intermediate: readonly string[] = []): Condition {
  return {
    kind: 'compare',
    operator: 'equals',
    left: tpl(left, 'none', intermediate),
    right: tpl(right, 'none', intermediate),
    text: `${left} equals "${right}"`,
  };
}

const base = {
  explicitId: true,
  condition: null,
  ignoreIfError: false,
  timeoutMs: 10_000,
  retries: 0,
  after: [],
  inputs: [],
  outputs: [],
  position: at,
} as const;

/** `url` may use `${name}` for the task's inputs. */
export function httpTask(id: string, url: string, overrides: Partial<HttpRequestTask> = {}): HttpRequestTask {
  return {
    ...base,
    id,
    className: 'HttpRequest',
    kind: 'http-request',
    url: tpl(url, 'url', overrides.inputs ?? []),
    method: 'GET',
    getParameters: [],
    headers: [],
    basicAuth: null,
    body: null,
    sign: null,
    outputs: [],
    ...overrides,
  };
}

export function emailTask(id: string, overrides: Partial<EmailTask> & { subjectSource?: string; toSources?: string[]; bodySource?: string } = {}): EmailTask {
  const { subjectSource, toSources, bodySource, ...rest } = overrides;
  const inputs = rest.inputs ?? [];
  return {
    ...base,
    id,
    className: 'Email',
    kind: 'email',
    from: tpl('shop@example.com', 'header'),
    to: (toSources ?? ['customer@example.com']).map((s) => tpl(s, 'header', inputs)),
    cc: [],
    bcc: [],
    replyTo: null,
    subject: tpl(subjectSource ?? 'Hello', 'header', inputs),
    bodies: [{ contentType: 'text/plain', template: tpl(bodySource ?? 'Hi', 'none', inputs), inlineImages: [] }],
    attachments: [],
    ...rest,
  };
}

export function endpoint(tasks: readonly Task[], name = 'test'): Endpoint {
  const taskGraph = buildTaskGraph(
    tasks.map((t) => ({ id: t.id, after: t.after, inputs: t.inputs, outputs: t.kind === 'http-request' ? t.outputs.map((o) => o.name) : [] })),
  );
  if (taskGraph.cycles.length > 0) throw new Error('test endpoint has a cycle');
  return {
    name,
    parameters: [],
    parametersByName: new Map(),
    readsHeaders: false,
    readsJsonPaths: false,
    keepsRequestBody: tasks.some((t) => t.kind === 'http-request' && (t as { body?: { kind: string } | null }).body?.kind === 'forward'),
    webhook: null,
    separator: '||',
    tasksMode: 'wait',
    includeInHash: null,
    hashJoin: 'concatenated',
    successes: [],
    error: { action: { kind: 'empty' }, position: null },
    tasks,
    taskGraph,
    protections: null,
    deduplicate: null,
    position: at,
  };
}

export function application(endpoints: readonly Endpoint[], email: EmailSettings | null = null): Application {
  return {
    file: 'endpoints.xml',
    directory: '/tmp',
    staticDirectory: '/tmp/static',
    endpoints,
    endpointsByName: new Map(endpoints.map((e) => [e.name, e])),
    email,
    security: null,
  };
}

export function scope(parameters: Record<string, string> = {}): ExpansionScope {
  return {
    parameters: new Map(Object.entries(parameters)),
    system: {
      'request-id': 'req-1',
      endpoint: 'test',
      environment: 'live',
      'client-ip': '127.0.0.1',
      'user-agent': 'vitest',
      'base-url': 'http://127.0.0.1:8080',
      'body-sha256': '',
    },
    env: {},
  };
}

export class RecordingObserver implements RuntimeObserver {
  readonly events: TaskOutcomeEvent[] = [];
  readonly warnings: string[] = [];
  taskFinished(event: TaskOutcomeEvent): void {
    this.events.push(event);
  }
  warn(message: string): void {
    this.warnings.push(message);
  }
  outcome(taskId: string): TaskOutcomeEvent {
    const found = this.events.filter((e) => e.taskId === taskId);
    if (found.length !== 1) throw new Error(`expected one outcome for ${taskId}, got ${found.length}`);
    return found[0]!;
  }
}
