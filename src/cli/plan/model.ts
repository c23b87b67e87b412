// The plan of a dry-run: plain data built once from the compiled application and read by every
// formatter, so text, JSON and graphs always tell the same story.

import type { SuccessAction } from '../../compiler/ast.js';
import type { TaskEdge } from '../../compiler/task-graph.js';
import type { Environment } from '../../runtime/parameters.js';
import type { TaskDescription } from '../../tasks/kind.js';

export interface Plan {
  /** null unless a request is simulated (any --param). */
  readonly simulation: SimulationInfo | null;
  readonly endpoints: readonly EndpointPlan[];
}

export interface SimulationInfo {
  /** As given with --param, in order of first appearance. */
  readonly parameters: readonly (readonly [string, readonly string[]])[];
  readonly environment: Environment;
  /** --body: the file, its size and content type; absent without one. */
  readonly body?: SimulatedBody;
  /** --header, as given; absent without any. */
  readonly headers?: readonly (readonly [string, string])[];
}

export interface SimulatedBody {
  readonly file: string;
  readonly size: number;
  readonly contentType: string;
}

/** A declared parameter's value for the simulated request, and where it came from. */
export interface BoundParameter {
  readonly name: string;
  /** As bound (several values joined with the separator); masked for a secret. */
  readonly value: string;
  readonly source: { readonly kind: 'name' } | { readonly kind: 'header'; readonly header: string } | { readonly kind: 'jsonpath'; readonly path: string };
  /** The request sent no value: this is the default-value. */
  readonly isDefault: boolean;
}

export interface ResponsePlan {
  readonly kind: SuccessAction['kind'];
  /** null where only I/O can tell (response-from-url, a forward to such a response). */
  readonly status: number | null;
  /** What it does, with templates as written: `redirect to ${base}/thanks`. */
  readonly summary: string;
  /** Simulated: the expanded target or body (secrets masked). */
  readonly expanded: string | null;
  /** The <success> condition as written, null for the fallback. */
  readonly condition: string | null;
  readonly line: number | null;
  /** Tasks the response is built after (tasks="wait" only). */
  readonly waitsFor: readonly string[];
}

/** The primary action fails on this request: serve answers with the <error> action. */
export interface PrimaryFailure {
  readonly detail: string;
  readonly status: number;
  /** When the failure is in an endpoint forwarded to, its name. */
  readonly endpoint: string;
}

export interface EndpointPlan {
  readonly name: string;
  readonly line: number;
  readonly tasksMode: 'wait' | 'background';
  /** Every <success> in file order, plus the implicit empty 200 when all are conditional. */
  readonly responses: readonly ResponsePlan[];
  /** The chosen one: simulated, or the unconditional one. */
  readonly response: ResponsePlan;
  /** True when a simulated request picked `response` among the <success> elements. */
  readonly responseChosen: boolean;
  /** Why the chosen response is only a guess (a condition that needs a task result or an unset variable). */
  readonly responseNote: string | null;
  readonly failure: PrimaryFailure | null;
  readonly tasks: readonly TaskPlan[];
  readonly stages: readonly (readonly string[])[];
  readonly edges: readonly TaskEdge[];
  /** With --body or --header: the endpoint's parameters as bound, when the request gets that far; else null. */
  readonly boundParameters: readonly BoundParameter[] | null;
  /** Simulated parameters the endpoint does not declare, with a close declared name. */
  readonly ignoredParameters: readonly { readonly name: string; readonly suggestion: string | null }[];
  /** Things that could not be checked or shown without I/O or the environment. */
  readonly notes: readonly string[];
  /** <honeypot>, <captcha>, <rate-limit>; null when the endpoint has none. */
  readonly protections: ProtectionPlan | null;
  /** <signature> and <handshake>; null when the endpoint has neither. */
  readonly webhook: WebhookPlan | null;
  /** <deduplicate>; null when the endpoint has none. */
  readonly deduplication: DeduplicationPlan | null;
}

/** <deduplicate> as dry-run shows it: never checked, since a simulation remembers nothing. */
export interface DeduplicationPlan {
  /** As written. */
  readonly key: string;
  /** The window, such as `3d`. */
  readonly for: string;
  /** Simulated: the key for this request ('' when blank: not deduplicated); null without a simulation, or when the request is refused before its parameters are bound. */
  readonly expanded: string | null;
  /** That a simulation does not check it. */
  readonly note: string;
}

export interface ProtectionPlan {
  readonly honeypot: string | null;
  /** verifyUrl as written (null for altcha). */
  readonly captcha: { readonly provider: string; readonly parameter: string; readonly minScore: number | null; readonly verifyUrl: string | null } | null;
  readonly rateLimits: readonly { readonly requests: number; readonly per: string; readonly by: string; readonly burst: number }[];
  /** Simulated: the checks serve would make, in its order; null without --param. */
  readonly checks: readonly ProtectionCheck[] | null;
}

export interface ProtectionCheck {
  readonly check: 'honeypot' | 'rate-limit' | 'captcha';
  /** not-checked: it needs a count or a verifier, which dry-run does not have. */
  readonly outcome: 'passes' | 'caught' | 'refused' | 'not-checked';
  readonly detail: string;
}

// Receiving webhooks: <signature> and <handshake>

export interface WebhookPlan {
  /** Each <signature> in force, in file order: any one verifying passes. */
  readonly signatures: readonly SignaturePlan[];
  /** The <handshake> scheme serve answers itself; null: none. */
  readonly handshake: string | null;
  /** Simulated: what serve would check first and dry-run does not; null without --param, --body or --header. */
  readonly checks: readonly WebhookCheck[] | null;
}

/** One <signature>: the headers serve reads, what it checks them against, and the timestamp's tolerance. */
export interface SignaturePlan {
  readonly scheme: string;
  readonly headers: readonly string[];
  /** What is verified, such as `HMAC-SHA256 (hex) of {timestamp}.{body}` or `Ed25519 (hex) of {timestamp}{body}`. */
  readonly checks: string;
  readonly tolerance: string | null;
}

export interface WebhookCheck {
  readonly check: 'signature' | 'handshake';
  /** not-checked: a signature (dry-run checks none), or a request that is no handshake; answered / refused: the handshake serve would answer. */
  readonly outcome: 'not-checked' | 'answered' | 'refused';
  readonly detail: string;
}

export interface TaskPlan {
  readonly id: string;
  /** The kind's registry name: `http-request`, `email`. */
  readonly kind: string;
  readonly className: string;
  readonly line: number;
  readonly dependsOn: readonly string[];
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly condition: string | null;
  readonly ignoreIfError: boolean;
  readonly timeoutMs: number;
  readonly retries: number;
  /** null unless simulated; then null too when the condition needs a task result. */
  readonly willRun: boolean | null;
  /** Why willRun is what it is, for people. */
  readonly willRunReason: string | null;
  /** Simulated and not skipped: what would be sent, as the task's kind describes it. */
  readonly detail: TaskDescription | null;
  /** The task would fail before sending anything (e.g. a line break in a header value). */
  readonly failure: string | null;
}
