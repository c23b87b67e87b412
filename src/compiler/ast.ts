// The compiled application: plain readonly data that validate, dry-run and serve all read.
// Everything decidable from the configuration is decided here (templates split, files
// resolved, task graph computed), so the request path only walks this structure.

import type { Position } from '../position.js';
import type { Condition, NamedTemplate, Template } from '../template/types.js';
import type { AuthorRegex } from './regex.js';
import type { TaskGraph } from './task-graph.js';
import type { JsonPathQuery } from './json-path.js';
import type { SignatureDescription } from '../webhooks/signature-description.js';
import type { HandshakeDescription } from '../webhooks/handshake.js';

// ---------------------------------------------------------------------------------------
// Parameters

export type ParameterFormat = 'email' | 'url' | 'integer' | 'number' | 'date';

/** Checked on every non-empty value (compiler/parameter-rules.ts). */
export interface ParameterRules {
  /** Must match the whole value; RE2 syntax, matched in linear time (compiler/regex.ts). */
  readonly pattern: AuthorRegex | null;
  /** In characters (code points). */
  readonly maxLength: number | null;
  readonly format: ParameterFormat | null;
}

/** Where a request's values for a parameter come from (docs/language.md, "<parameter>"). */
export type ParameterSource =
  /** By its name: the query string, a form, multipart, or a top-level member of a JSON body. */
  | { readonly kind: 'name' }
  /** What an RFC 9535 JSONPath selects in a JSON body; compiled with the file. */
  | { readonly kind: 'jsonpath'; readonly path: string; readonly query: JsonPathQuery }
  /** A request header; `header` is lower-case, as node:http gives header names. */
  | { readonly kind: 'header'; readonly header: string };

export interface ParameterDeclaration {
  readonly name: string;
  readonly source: ParameterSource;
  /** A literal; with it the parameter is optional. Without it, a blank value counts as missing. */
  readonly defaultValue: string | null;
  /** null: no rule, any value. */
  readonly rules: ParameterRules | null;
  readonly position: Position;
}

// ---------------------------------------------------------------------------------------
// Actions

export interface RedirectAction {
  readonly kind: 'redirect';
  readonly url: Template;
  /** Empty: any URL. */
  readonly whitelist: readonly string[];
  readonly position: Position;
}
export interface StaticAction {
  readonly kind: 'static';
  /** As written, relative to static/. */
  readonly filename: string;
  /** Resolved, checked to exist inside static/. */
  readonly absolutePath: string;
  readonly contentType: string;
  readonly downloadFilename: Template | null;
  readonly position: Position;
}
export interface UrlAction {
  readonly kind: 'url';
  readonly url: Template;
  readonly downloadFilename: Template | null;
  readonly position: Position;
}
export interface ForwardAction {
  readonly kind: 'forward';
  readonly endpoint: string;
  /** null: pass on this endpoint's bound parameters; else only these. */
  readonly inputParameters: readonly NamedTemplate[] | null;
  readonly position: Position;
}
export interface BodyAction {
  readonly kind: 'body';
  /** As written; null when absent: 200 for a success, the failure's status for an error. */
  readonly status: number | null;
  readonly contentType: string;
  readonly body: Template;
  readonly position: Position;
}
export interface EmptyAction {
  readonly kind: 'empty';
}

export type SuccessAction = EmptyAction | RedirectAction | StaticAction | UrlAction | ForwardAction | BodyAction;
/** <error> may not forward nor carry a download filename (downloadFilename is always null). */
export type ErrorAction = EmptyAction | RedirectAction | StaticAction | UrlAction | BodyAction;

export interface SuccessResponse {
  readonly condition: Condition | null;
  readonly action: SuccessAction;
  /** Task ids the response waits for (after + producers of its inputs); only with tasks="wait". */
  readonly after: readonly string[];
  readonly inputs: readonly string[];
  /** The response is built once the tasks it waits for have run (tasks="wait" with after or inputs). */
  readonly deferred: boolean;
  readonly position: Position;
}

export interface ErrorResponse {
  readonly action: ErrorAction;
  readonly position: Position | null;
}

// ---------------------------------------------------------------------------------------
// Tasks

/**
 * What every task has, whatever its kind. Each kind (src/tasks/<kind>/) extends it with its
 * own fields and a literal `kind`; the compiler, scheduler and dry-run read only these fields
 * and leave the rest to the kind's definition.
 */
export interface Task {
  /** The kind's name in the task-kind registry, e.g. `http-request`. */
  readonly kind: string;
  /** The id attribute, or `task-N` (1-based position among the endpoint's tasks). */
  readonly id: string;
  readonly explicitId: boolean;
  /** Class as written. */
  readonly className: string;
  readonly condition: Condition | null;
  readonly ignoreIfError: boolean;
  readonly timeoutMs: number;
  readonly retries: number;
  /** Explicit <after task-id>. */
  readonly after: readonly string[];
  /** <input-intermediate-value name>. */
  readonly inputs: readonly string[];
  /** Empty unless the kind has an answer to read them from. */
  readonly outputs: readonly OutputIntermediateValue[];
  readonly position: Position;
}

/** A JSONPath is RFC 9535, compiled with the file as a parameter's is (compiler/json-path.ts). */
export type OutputSelector =
  { readonly kind: 'jsonpath'; readonly path: string; readonly query: JsonPathQuery } | { readonly kind: 'xpath'; readonly path: string };

export interface OutputIntermediateValue {
  readonly name: string;
  readonly selector: OutputSelector;
  /** Must match the whole value; RE2 syntax, matched in linear time (compiler/regex.ts). */
  readonly regex: AuthorRegex | null;
}

// ---------------------------------------------------------------------------------------
// Protections of a public form (<honeypot>, <captcha>, <rate-limit>)

/** <rate-limit requests per by burst>: at most `requests` (+ `burst`) per window, per key. */
export interface RateLimitRule {
  readonly requests: number;
  /** The window, a whole number of seconds in ms. */
  readonly perMs: number;
  /** null: by the client's address; else the bound value of this parameter. */
  readonly byParameter: string | null;
  /** Extra requests a key may make in one window above `requests`. */
  readonly burst: number;
  /** The same in every process and instance serving this file: part of the store's key. */
  readonly id: string;
  readonly position: Position;
}

export type CaptchaProvider = 'turnstile' | 'hcaptcha' | 'recaptcha' | 'altcha';

export interface CaptchaRule {
  readonly provider: CaptchaProvider;
  /** The site secret (turnstile, hcaptcha, recaptcha) or the HMAC key (altcha); ${env:...} only. */
  readonly secret: Template;
  /** The form field that carries the token or the solution. */
  readonly parameter: string;
  /** reCAPTCHA v3: the lowest score accepted; null: any. */
  readonly minScore: number | null;
  /** The siteverify URL, ${env:...} allowed (empty for altcha). */
  readonly verifyUrl: Template;
  readonly position: Position;
}

/** An endpoint's checks before anything runs; null on the Endpoint when it has none. */
export interface Protections {
  /** The trap field: a request that fills it is answered as its success would be, and nothing runs. */
  readonly honeypot: string | null;
  readonly captcha: CaptchaRule | null;
  /** Checked before the body is read. */
  readonly limitsByClient: readonly RateLimitRule[];
  /** Checked after the parameters are bound. */
  readonly limitsByParameter: readonly RateLimitRule[];
  /** A honeypot, a CAPTCHA or a limit by parameter: the pipeline has checks to make (limits by client are the server's). */
  readonly afterBinding: boolean;
}

// ---------------------------------------------------------------------------------------
// Receiving webhooks: <signature> and <handshake> (docs/language.md, "<signature>" and "<handshake>")

/** At least one: a request passes when any one verifies (secret rotation). */
export type Signatures = readonly [SignatureDescription, ...SignatureDescription[]];

/**
 * What an endpoint checks of a webhook delivery before anything else of the request is read:
 * the sender's signature over the raw body, and the sender's verification handshake. At least
 * one of the two; null on the Endpoint when it has neither.
 */
export type WebhookChecks =
  | { readonly signatures: Signatures; readonly handshake: HandshakeDescription | null }
  | { readonly signatures: null; readonly handshake: HandshakeDescription };

// ---------------------------------------------------------------------------------------
// Endpoints and the application

export type TasksMode = 'wait' | 'background';

/**
 * How the hash's parts are written before SHA-256: `concatenated` one after the other, as
 * OpenEndpoints does (so `1`+`000` and `10`+`00` give the same hash); `length-prefixed` each as
 * its UTF-8 byte length, a colon and its bytes, so no two lists of values give the same text.
 */
export type HashJoin = 'concatenated' | 'length-prefixed';
export const HASH_JOINS: readonly HashJoin[] = ['concatenated', 'length-prefixed'];

export interface Endpoint {
  readonly name: string;
  /** Declared parameters in scope, inherited from folders, lower declarations winning. */
  readonly parameters: readonly ParameterDeclaration[];
  readonly parametersByName: ReadonlyMap<string, ParameterDeclaration>;
  /** A parameter reads a request header: only then does the server hand the headers over. */
  readonly readsHeaders: boolean;
  /** A parameter reads the JSON body with a JSONPath: only then is the parsed body kept for the request. */
  readonly readsJsonPaths: boolean;
  /**
   * A task of the endpoint, or of an endpoint it may forward to, uses the request body as
   * received: the body is kept raw for the request (and its queued job), and any content type
   * is accepted. Also set for an endpoint with its own <signature> or <handshake>, which reads the
   * raw bytes before anything else (its job carries them only when a task forwards them).
   */
  readonly keepsRequestBody: boolean;
  /** <signature> and <handshake>, own or inherited; null: neither, and the request path does not look further. */
  readonly webhook: WebhookChecks | null;
  readonly separator: string;
  readonly tasksMode: TasksMode;
  /** Parameter names, in order; null when the endpoint has no <include-in-hash>. */
  readonly includeInHash: readonly string[] | null;
  /** `join` of <include-in-hash>; `concatenated` without one. */
  readonly hashJoin: HashJoin;
  /** In file order; at most the last has no condition. */
  readonly successes: readonly SuccessResponse[];
  readonly error: ErrorResponse;
  /** In file order. */
  readonly tasks: readonly Task[];
  readonly taskGraph: TaskGraph;
  /** null: none, and the request path does not look further. */
  readonly protections: Protections | null;
  /** <deduplicate>: null when requests to the endpoint are not deduplicated. */
  readonly deduplicate: Deduplication | null;
  readonly position: Position;
}

export interface EmailSettings {
  /** Required in the file; --smtp-url / ENDPOINT_SERVICE_SMTP_URL replace it at run time. */
  readonly server: Template;
  readonly port: number | null;
  readonly username: Template | null;
  readonly password: Template | null;
  readonly headers: readonly NamedTemplate[];
  readonly position: Position;
}

export interface SecuritySettings {
  readonly secretKeys: readonly Template[];
  readonly position: Position;
}

export interface Application {
  /** The endpoints.xml path as given. */
  readonly file: string;
  /** Absolute application directory. */
  readonly directory: string;
  readonly staticDirectory: string;
  /** In file order. */
  readonly endpoints: readonly Endpoint[];
  readonly endpointsByName: ReadonlyMap<string, Endpoint>;
  readonly email: EmailSettings | null;
  readonly security: SecuritySettings | null;
}

// ---------------------------------------------------------------------------------------
// Deduplication (<deduplicate>): a delivery the sender repeats runs once

/** The longest `for` of a <deduplicate>: senders retry for at most a few days. */
export const MAX_DEDUPLICATION_MS = 30 * 86_400_000;
/** `for` when none is given. */
export const DEFAULT_DEDUPLICATION_MS = 86_400_000;

/** <deduplicate key for>, on the endpoint or inherited from its folder. */
export interface Deduplication {
  /** Over parameters and system parameters; a request whose key expands blank is not deduplicated. */
  readonly key: Template;
  /** How long a success is remembered, in whole seconds (ms). */
  readonly forMs: number;
  readonly position: Position;
}
