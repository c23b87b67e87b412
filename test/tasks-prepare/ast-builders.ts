// Hand-built AST pieces for unit tests: templates are split like the compiler does, with each
// placeholder resolved against the names the test declares.
import type { EmailTask } from '../../src/tasks/email/types.js';
import type { HttpRequestTask } from '../../src/tasks/http-request/types.js';
import {
  SYSTEM_PARAMETERS,
  type Condition,
  type Escaping,
  type NamedTemplate,
  type SystemParameter,
  type Template,
  type TemplatePart,
} from '../../src/template/types.js';
import { type Position } from '../../src/position.js';
import { escapeForm } from '../../src/template/escape.js';
import { parseTemplateSource } from '../../src/template/parse.js';
import type { ExpansionScope } from '../../src/template/expand.js';

export const at = (line = 1, column = 1): Position => ({ file: 'endpoints.xml', line, column });

/** `intermediate`: names that resolve to intermediate values rather than parameters. */
export function tpl(source: string, escaping: Escaping = 'none', intermediate: readonly string[] = []): Template {
  const parsed = parseTemplateSource(source);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const parts: TemplatePart[] = parsed.segments.map((s) => {
    // As the compiler does: only form values are escaped text; other contexts keep the source.
    if (s.kind === 'text') return { kind: 'literal', text: escaping === 'form' ? escapeForm(s.text) : s.text };
    if (s.name.startsWith('env:')) return { kind: 'env', name: s.name.slice(4) };
    if (intermediate.includes(s.name)) return { kind: 'intermediate', name: s.name };
    if ((SYSTEM_PARAMETERS as readonly string[]).includes(s.name)) return { kind: 'system', name: s.name as SystemParameter };
    return { kind: 'parameter', name: s.name };
  });
  return { source, escaping, parts };
}

export const named = (name: string, value: string, escaping: Escaping = 'none', intermediate: readonly string[] = []): NamedTemplate => ({
  name,
  value: tpl(value, escaping, intermediate),
});

export function compare(
  left: string,
  operator: 'equals' | 'notequals' | 'gt' | 'ge' | 'lt' | 'le',
  right: string,
  intermediate: readonly string[] = [],
): Condition {
  return {
    kind: 'compare',
    operator,
    left: tpl(left, 'none', intermediate),
    right: tpl(right, 'none', intermediate),
    text: `${left} ${operator} "${right}"`,
  };
}

export function predicate(left: string, operator: 'isempty' | 'hasmultiple', expected: boolean, intermediate: readonly string[] = []): Condition {
  return { kind: 'predicate', operator, left: tpl(left, 'none', intermediate), expected, text: `${left} ${operator} "${expected}"` };
}

const taskBase = {
  explicitId: true,
  condition: null,
  ignoreIfError: false,
  timeoutMs: 30_000,
  retries: 0,
  after: [],
  inputs: [],
  outputs: [],
  position: at(),
} as const;

export function httpTask(overrides: Partial<HttpRequestTask> = {}): HttpRequestTask {
  return {
    ...taskBase,
    id: 'call',
    className: 'HttpRequest',
    kind: 'http-request',
    url: tpl('https://api.example/items', 'url'),
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

export function emailTask(overrides: Partial<EmailTask> = {}): EmailTask {
  return {
    ...taskBase,
    id: 'mail',
    className: 'Email',
    kind: 'email',
    from: tpl('shop@example.com', 'header'),
    to: [tpl('customer@example.com', 'header')],
    cc: [],
    bcc: [],
    replyTo: null,
    subject: tpl('Hello', 'header'),
    bodies: [{ contentType: 'text/plain', template: tpl('Hi'), inlineImages: [] }],
    attachments: [],
    ...overrides,
  };
}

export function scope(parameters: Record<string, string> = {}, extra: Partial<ExpansionScope> = {}): ExpansionScope {
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
    ...extra,
  };
}
