// One table of diagnostic codes, their severity per command and their messages. A message says
// what is wrong and what to do; tests assert codes and positions, not wording. Diagnostics
// (diagnostics.ts) reports by it.
//
// A few problems weigh differently by command: an unset ${env:NAME} is a warning where the file
// is checked (validate may run on a laptop without the production secrets) and an error where it
// runs (serve). Such an entry gives its severity per command, and a message per command when the
// advice differs; 'off' means the command does not report the code at all (dry-run sends no mail,
// so it needs no SMTP settings). A code is the same code in every command.

import { HANDSHAKE_SCHEMES } from '../webhooks/handshake.js';
import { SIGNATURE_SCHEMES } from '../webhooks/signature-description.js';
import type { CompileMode } from './mode.js';

export type Severity = 'error' | 'warning';

/** One value for every command, or one per command. */
export type PerCommand<T> = T | { readonly [C in CompileMode]: T };
/** A severity, or 'off': not reported by that command. */
export type Level = Severity | 'off';
export type Message = (...args: never[]) => string;

const dym = (suggestion: string | undefined, wrap: (s: string) => string = (s) => `"${s}"`) =>
  suggestion === undefined ? '' : ` Did you mean ${wrap(suggestion)}?`;
const tag = (s: string) => `<${s}>`;
// From the tables the schemes are defined by, so that a scheme added there is offered here.
const useOneOf = (names: readonly string[]) => ` Use one of ${names.join(', ')}.`;
const names = (parameters: readonly string[]) =>
  parameters.length === 1 ? `the request parameter "${parameters[0]}"` : `the request parameters ${parameters.map((p) => `"${p}"`).join(', ')}`;
// Where the file is checked rather than run: the advice looks ahead to where it will run.
const envNotSetHere = (name: string) => `Environment variable ${name} is not set here; it must be set where the service runs.`;
const smtpMissingHere = () =>
  `This application has Email tasks but no SMTP settings: add email-sending-configuration.xml, or pass --smtp-url / ENDPOINT_SERVICE_SMTP_URL where it runs.`;

/** Where an OpenEndpoints user reads what carries over and what to write instead (shipped in the npm package). */
const MIGRATION_GUIDE = 'docs/migrating-from-openendpoints.md';

/**
 * Codes reported at an attribute whose value is a secret written into the file: a report that
 * shows the source line (validate's text, which CI logs keep) masks that value.
 */
export const QUOTES_SECRET: ReadonlySet<string> = new Set(['secret-in-file', 'invalid-signing-secret']);

export const DIAGNOSTICS = {
  // The file and its XML
  'file-unreadable': { severity: 'error', message: (path: string, reason: string) => `Cannot read ${path}: ${reason}.` },
  'file-empty': { severity: 'error', message: (m: string) => capitalise(m) + '.' },
  'xml-malformed': { severity: 'error', message: (m: string) => capitalise(m) + '.' },
  'xml-encoding': { severity: 'error', message: (m: string) => capitalise(m) + '.' },
  'xml-doctype': { severity: 'error', message: (m: string) => capitalise(m) + '.' },
  'xml-too-deep': { severity: 'error', message: (m: string) => capitalise(m) + ': no configuration needs this; check for a runaway generator.' },
  'wrong-root-element': {
    severity: 'error',
    message: (found: string, expected: string) => `The root element is <${found}>, but this file needs <${expected}>.`,
  },

  // Structure
  'unknown-element': {
    severity: 'error',
    message: (name: string, parent: string, suggestion?: string) => `Unknown element <${name}> in <${parent}>.${dym(suggestion, tag)}`,
  },
  'unknown-attribute': {
    severity: 'error',
    message: (name: string, element: string, suggestion?: string) => `Unknown attribute "${name}" on <${element}>.${dym(suggestion)}`,
  },
  'unsupported-feature': {
    severity: 'error',
    message: (what: string, instead: string | null) =>
      `${what} is an OpenEndpoints feature that endpoint-service does not implement: ${instead ?? 'nothing here does the same, so remove it (and whatever only makes sense with it)'}. See ${MIGRATION_GUIDE}.`,
  },
  'missing-attribute': {
    severity: 'error',
    message: (name: string, element: string) => `<${element}> needs a "${name}" attribute.`,
  },
  'missing-element': {
    severity: 'error',
    message: (name: string, parent: string) => `<${parent}> needs a <${name}> element.`,
  },
  'duplicate-element': {
    severity: 'error',
    message: (name: string, parent: string, firstLine: number) =>
      `<${parent}> may have only one <${name}>; the first is on line ${firstLine}. Remove one of them.`,
  },
  'unexpected-text': {
    severity: 'error',
    message: (element: string) => `Text is not allowed directly inside <${element}>: move it into the element it belongs to, or remove it.`,
  },
  'invalid-default-value': {
    severity: 'error',
    message: (name: string, violation: string) =>
      `The default-value of parameter "${name}" ${violation}, so the parameter's own rules would refuse it: change the default or the rule.`,
  },
  'invalid-value': {
    severity: 'error',
    message: (attributeOrElement: string, value: string, expected: string) =>
      `"${value}" is not a valid value for ${attributeOrElement}: expected ${expected}.`,
  },
  'multiple-actions': {
    severity: 'error',
    message: (parent: string, first: string, second: string) => `<${parent}> may hold only one action, but has <${first}> and <${second}>: keep one.`,
  },

  // Endpoints and parameters
  'invalid-endpoint-name': {
    severity: 'error',
    message: (name: string) => `Endpoint name "${name}" is not a valid URL path segment: use letters, digits, "_" and "-", starting with a letter or digit.`,
  },
  'duplicate-endpoint': {
    severity: 'error',
    message: (name: string, firstLine: number) => `Endpoint "${name}" is already defined on line ${firstLine}: endpoint names must be unique.`,
  },
  'invalid-parameter-name': {
    severity: 'error',
    message: (name: string) => `Parameter name "${name}" is not valid: use letters, digits, "_", "." and "-".`,
  },
  'duplicate-parameter': {
    severity: 'error',
    message: (name: string, firstLine: number) => `Parameter "${name}" is already declared here on line ${firstLine}: remove one declaration.`,
  },
  'conflicting-parameter-source': {
    severity: 'error',
    message: () =>
      `A parameter has one source: give "jsonpath" (a value from the JSON body) or "header" (a request header), not both; declare two parameters to read both.`,
  },
  'invalid-header-name': {
    severity: 'error',
    message: (name: string) =>
      `"${name}" is not a header name: write it as it is sent, letters, digits and !#$%&'*+-.^_\`|~ without spaces or a colon, such as X-GitHub-Event.`,
  },
  'parameter-shadows-system': {
    severity: 'warning',
    message: (name: string) => `Parameter "${name}" has the name of a system parameter: \${${name}} will mean the request parameter, not the system value.`,
  },
  'unknown-hash-parameter': {
    severity: 'error',
    message: (name: string, suggestion?: string) => `<include-in-hash> names "${name}", which is not a parameter declared for this endpoint.${dym(suggestion)}`,
  },
  'unknown-rate-limit-parameter': {
    severity: 'error',
    message: (name: string, suggestion?: string) => `<rate-limit by="parameter:${name}"> names a parameter that is not declared here.${dym(suggestion)}`,
  },
  'secret-in-file': {
    severity: { validate: 'warning', serve: 'off', 'dry-run': 'off' },
    message: (attribute: string) =>
      `This ${attribute} is written into the file: anyone who reads the file can use it. Take it from the environment with \${env:NAME}.`,
  },
  'hash-without-security': {
    severity: 'error',
    message: () => `<include-in-hash> needs a security.xml with a <secret-key> beside endpoints.xml: without it no request can be authenticated.`,
  },

  // Receiving webhooks: <signature> and <handshake>
  'unknown-signature-scheme': {
    severity: 'error',
    message: (scheme: string, suggestion?: string) =>
      `Unknown signature scheme "${scheme}".${suggestion === undefined ? useOneOf(SIGNATURE_SCHEMES) : dym(suggestion)}`,
  },
  'unknown-handshake-scheme': {
    severity: 'error',
    message: (scheme: string, suggestion?: string) =>
      `Unknown handshake scheme "${scheme}".${suggestion === undefined ? useOneOf(HANDSHAKE_SCHEMES) : dym(suggestion)}`,
  },
  // The message says which attribute, why the scheme fixes it, and what to write instead (webhooks/describe-*.ts).
  'attribute-not-for-scheme': { severity: 'error', message: (message: string) => message },
  // The message never quotes the secret: it may come from the environment.
  'invalid-signature-secret': { severity: 'error', message: (message: string) => message },
  // The message says which encodings are read; it does not quote the key.
  'invalid-public-key': { severity: 'error', message: (message: string) => message },
  // The message names the placeholder and the closest one, or what the template lacks (webhooks/describe-generic.ts).
  'invalid-signed-template': { severity: 'error', message: (message: string) => message },

  // Templates
  'template-syntax': { severity: 'error', message: (m: string) => `Invalid placeholder: ${m}.` },
  'unknown-placeholder': {
    severity: 'error',
    message: (name: string, where: string, suggestion?: string) =>
      `\${${name}} is not a parameter, system parameter or input intermediate value ${where}.${dym(suggestion, (s) => '${' + s + '}')}`,
  },
  'placeholder-not-allowed': {
    severity: 'error',
    message: (where: string) => `Placeholders are not allowed in ${where}: write a literal value.`,
  },
  'error-placeholder': {
    severity: 'error',
    message: (name: string) =>
      `\${${name}} cannot be used in <error>: only system parameters and \${internal-error-text} are available there (the failure may have happened before parameters were bound).`,
  },
  'env-not-set': {
    severity: { validate: 'warning', serve: 'error', 'dry-run': 'warning' },
    // A generated file may use one variable in every endpoint: one diagnostic per variable.
    oncePerFile: true,
    message: {
      validate: envNotSetHere,
      serve: (name: string) => `Environment variable ${name} is not set: set it before starting the service.`,
      'dry-run': envNotSetHere,
    },
  },

  // Conditions
  'invalid-condition': { severity: 'error', message: (m: string) => `Invalid condition: ${m}.` },
  'unreachable-success': {
    severity: 'error',
    message: (line: number) =>
      `This <success> comes after the unconditional <success> on line ${line} and can never be used: the unconditional one must come last.`,
  },

  // Actions
  'not-allowed-in-error': {
    severity: 'error',
    message: (what: string) => `${what} is not allowed in <error>.`,
  },
  'invalid-download-filename': {
    severity: 'error',
    message: (value: string) => `download-filename "${value}" may only contain A-Z, a-z, 0-9, "_", "." and "-".`,
  },
  'unknown-endpoint': {
    severity: 'error',
    message: (name: string, suggestion?: string) => `<forward-to-endpoint> names endpoint "${name}", which does not exist.${dym(suggestion)}`,
  },
  'forward-cycle': {
    severity: 'error',
    message: (cycle: string) => `Endpoints forward to each other in a cycle: ${cycle}. Break the chain.`,
  },
  'success-condition-uses-intermediate-value': {
    severity: 'error',
    message: () =>
      `The condition of a <success> is evaluated before tasks run, so it cannot use an intermediate value: test a request parameter, or move the choice into the response body.`,
  },
  'success-waits-in-background': {
    severity: 'error',
    message: () =>
      `This <success> waits for tasks (<after>/<input-intermediate-value>), but the endpoint has tasks="background", which answers before tasks run: use tasks="wait" or remove the wait.`,
  },
  'invalid-json': { severity: 'error', message: (m: string) => `Invalid JSON: ${m}.` },
  'invalid-xml-body': { severity: 'error', message: (m: string) => `Invalid XML body: ${m}.` },
  'json-placeholder-position': {
    severity: 'error',
    message: (where: string) => `A placeholder ${where} in a JSON body: placeholders may stand only inside JSON string values (write "\${name}").`,
  },

  // Files
  'file-not-found': { severity: 'error', message: (path: string, folder: string) => `File "${path}" does not exist in ${folder}.` },
  'file-outside-folder': {
    severity: 'error',
    message: (path: string, folder: string) => `File "${path}" is outside ${folder}: paths must stay inside it (no "..", no absolute path, no link out).`,
  },

  // Tasks
  'unknown-task-class': {
    severity: 'error',
    message: (name: string, kinds: { readonly short: readonly string[]; readonly long: readonly string[] }, suggestion?: string) =>
      `Unknown task class "${name}": use ${kinds.short.join(' or ')}${kinds.long.length > 0 ? ` (or ${kinds.long.join(' / ')})` : ''}.${dym(suggestion)}`,
  },
  'duplicate-task-id': {
    severity: 'error',
    message: (id: string, firstLine: number) => `Task id "${id}" is already used on line ${firstLine}: task ids must be unique within the endpoint.`,
  },
  'unknown-task': {
    severity: 'error',
    message: (id: string, suggestion?: string) => `No task with id "${id}" in this endpoint.${dym(suggestion)}`,
  },
  'intermediate-value-not-produced': {
    severity: 'error',
    message: (name: string, suggestion?: string) =>
      `Intermediate value "${name}" is used but no task of this endpoint produces it with <output-intermediate-value>.${dym(suggestion)}`,
  },
  'intermediate-value-produced-twice': {
    severity: 'error',
    message: (name: string, firstLine: number) => `Intermediate value "${name}" is already produced on line ${firstLine}: give each output its own name.`,
  },
  'intermediate-value-shadows-parameter': {
    severity: 'error',
    message: (name: string) => `Intermediate value "${name}" has the name of a parameter in scope: rename one of them.`,
  },
  'output-on-optional-task': {
    severity: 'error',
    message: (why: string) => `A task that outputs intermediate values may not have ${why}: its dependants could run without the value.`,
  },
  // The code predates other kinds without outputs; it names any such kind in its message.
  'email-output': {
    severity: 'error',
    message: (kind: string, withOutputs: readonly string[]) =>
      `A task of class ${kind} cannot output intermediate values: only ${withOutputs.join(' and ')} tasks have an answer to read.`,
  },
  'task-cycle': { severity: 'error', message: (cycle: string) => `Tasks depend on each other in a cycle: ${cycle}. Remove one of the dependencies.` },
  'invalid-output': { severity: 'error', message: (m: string) => `Invalid <output-intermediate-value>: ${m}.` },
  'invalid-jsonpath': { severity: 'error', message: (path: string, m: string) => `Invalid JSONPath "${path}": ${m}.` },
  'unsupported-jsonpath': {
    severity: 'error',
    message: (path: string, construct: string, advice: string) =>
      `JSONPath "${path}" uses ${construct}, which is not RFC 9535 JSONPath (the language of every jsonpath attribute): ${advice}.`,
  },
  'invalid-xpath': { severity: 'error', message: (path: string, m: string) => `Invalid XPath "${path}": ${m}.` },
  'invalid-regex': { severity: 'error', message: (re: string, m: string) => `Invalid regex "${re}": ${m}.` },
  'unsupported-regex': {
    severity: 'error',
    message: (re: string, construct: string, advice: string) =>
      `Regex "${re}" uses ${construct}, which RE2 syntax does not have: regexes here are RE2, matched in time linear in the value's length, so that no value can hold up the service.${advice}`,
  },
  'conflicting-body': { severity: 'error', message: (m: string) => `${m}.` },
  'email-without-body': {
    severity: 'warning',
    message: () => `This Email task has no <body>: its messages will have an empty text body.`,
  },

  // What a value of the request may decide: lints for the author, so validate (and CI) only;
  // serve and dry-run run or show the application as written.
  'destination-from-request': {
    severity: { validate: 'warning', serve: 'off', 'dry-run': 'off' },
    message: (kind: 'task' | 'response-from-url' | 'redirect', parameters: readonly string[]) =>
      `The scheme, host or port of this ${kind === 'task' ? 'task URL' : kind === 'redirect' ? 'redirect' : '<response-from-url>'} comes from ${names(parameters)}: any client can choose where this request goes. ` +
      (kind === 'redirect'
        ? `Write the host yourself, or add <redirect-prefix-whitelist-entry> elements.`
        : `Write the host yourself (or take it from \${env:...} or an intermediate value), or limit it with serve --allow-task-host and --deny-private-addresses.`),
  },
  'base-url-from-host': {
    // dry-run simulates its own base-url; a generated file may link back in every mail: once per file.
    severity: { validate: 'warning', serve: 'warning', 'dry-run': 'off' },
    oncePerFile: true,
    message: () =>
      `\${base-url} in a task is built from the request's Host header, which any client chooses: a link in a mail or a value sent to an API may point to another site. Serve it with --public-url (such as --public-url https://forms.example) so that \${base-url} is the service's own URL.`,
  },
  'recipient-from-request': {
    severity: { validate: 'warning', serve: 'off', 'dry-run': 'off' },
    message: (parameters: readonly string[]) =>
      `This recipient comes from ${names(parameters)} and nothing guards the endpoint (no hash authentication, CAPTCHA or rate limit): any client can make this service send mail to any address. Write the address yourself, or protect the endpoint with security.xml and <include-in-hash>, a <captcha> or a <rate-limit>.`,
  },

  // Deduplication (<deduplicate>)
  'constant-deduplication-key': {
    severity: 'error',
    message: (key: string) =>
      `The deduplication key "${key}" is the same for every request, so every request after the first would be answered with the first one's answer: build it from a parameter that names the delivery, such as key="\${delivery}" with <parameter name="delivery" header="X-GitHub-Delivery"/>.`,
  },
  'deduplication-key-never-repeats': {
    severity: 'warning',
    message: () =>
      `This deduplication key uses \${request-id}, which is new for every request, so no request is ever recognised as a repeat: build the key from what the sender repeats, such as its delivery id header.`,
  },
  'invalid-deduplication-window': {
    severity: 'error',
    message: (value: string, longest: string) =>
      `"${value}" is not a deduplication window: write how long a success is remembered, from 1s to ${longest}, such as for="5m", for="4h" or for="3d".`,
  },
  // End of deduplication

  // Signing relays (<sign> on HttpRequest tasks)
  'invalid-signing-secret': {
    severity: 'error',
    message: () =>
      `The secret of <sign scheme="standard"> is not a Standard Webhooks signing secret: it is "whsec_" followed by base64, as the receiver's settings show it (such as whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw).`,
  },
  // End of signing relays

  // Settings files
  'smtp-not-configured': {
    severity: { validate: 'warning', serve: 'error', 'dry-run': 'off' },
    message: {
      validate: smtpMissingHere,
      serve: () =>
        `This application has Email tasks but no SMTP settings: add email-sending-configuration.xml, or pass --smtp-url / set ENDPOINT_SERVICE_SMTP_URL.`,
      'dry-run': smtpMissingHere,
    },
  },
} as const satisfies Record<string, { severity: PerCommand<Level>; message: PerCommand<Message>; oncePerFile?: true }>;

export type DiagnosticCode = keyof typeof DIAGNOSTICS;
type MessageOf<C extends DiagnosticCode> = (typeof DIAGNOSTICS)[C]['message'];
// Per-command messages of one code take the same arguments: the validate one stands for all.
export type Args<C extends DiagnosticCode> =
  MessageOf<C> extends { readonly validate: infer F extends Message } ? Parameters<F> : MessageOf<C> extends Message ? Parameters<MessageOf<C>> : never;

/** The severity of `code` when `mode` reports it; 'off' when that command does not. */
export function severityOf(code: DiagnosticCode, mode: CompileMode): Level {
  const severity: PerCommand<Level> = DIAGNOSTICS[code].severity;
  return typeof severity === 'string' ? severity : severity[mode];
}

export function messageOf(code: DiagnosticCode, mode: CompileMode): Message {
  const message: PerCommand<Message> = DIAGNOSTICS[code].message;
  return typeof message === 'function' ? message : message[mode];
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
