// Builds the dry-run plan from a compiled application and, with --param, the decision serve
// would take for one request per endpoint (runtime/decision.ts, the same functions), described
// rather than carried out. Tasks are described by their own kinds (src/tasks/<kind>/), the
// responses by responses.ts.

import type { Application, Endpoint, SuccessResponse, Task } from '../../compiler/ast.js';
import { closest } from '../../compiler/suggest.js';
import { prepareBeforeSideEffects } from '../../runtime/preparation.js';
import { decideRequest, decideResponse, type Decision, type DecisionInput, type Proceed, type ResponseDecision } from '../../runtime/decision.js';
import { ignoredParameters, parseEnvironment, type RawParameters, type RequestFacts } from '../../runtime/parameters.js';
import { describeError } from '../../errors.js';
import { NO_SOURCES, sourcedValues, type RequestSources } from '../../runtime/sources.js';
import type { TaskKinds } from '../../tasks/registry.js';
import { DEFAULT_TASK_SETTINGS, type TaskSettings } from '../../tasks/settings.js';
import { evaluateCondition } from '../../template/condition.js';
import { MissingValueError, type ExpansionScope, type PlaceholderPart } from '../../template/expand.js';
import type { Condition } from '../../template/types.js';
import type { BoundParameter, EndpointPlan, Plan, SimulatedBody, SimulationInfo, TaskPlan } from './model.js';
import { describeInner, describeSuccess, listResponses, refusedOutcome, shownTarget, type Outcome } from './responses.js';
import { describeProtections, simulateProtections } from './protections.js';
import { describeWebhook, handshakeResponse, simulatedHandshakeRequest, simulateWebhook } from './webhook.js';
import { describeDeduplication, simulateDeduplication } from './deduplication.js';
import type { RawBody } from '../../upload.js';

/** The request a simulation pretends to receive: fixed so plans are reproducible. */
export const SIMULATED_REQUEST: Omit<RequestFacts, 'environment'> = {
  requestId: 'dry-run',
  clientIp: '127.0.0.1',
  userAgent: 'endpoint-service dry-run',
  baseUrl: 'http://127.0.0.1:8080',
};

export const SECRET_MASK = '***';

export interface PlanOptions {
  /** Endpoints to plan, in the order to print them. */
  readonly endpoints: readonly Endpoint[];
  /** The --param values, and those of a --body by name; null: no simulated request. */
  readonly parameters: RawParameters | null;
  /** --header and a JSON --body, for parameters declared with a source; absent: none. */
  readonly sources?: RequestSources;
  /** --body and --header as given, shown with the simulation; absent: neither was given. */
  readonly delivery?: {
    readonly body: SimulatedBody | null;
    readonly headers: readonly (readonly [string, string])[];
    /** The --param values alone, shown and checked for names the endpoint ignores; a body's members are not. */
    readonly given: RawParameters;
    /** The --body bytes and type, as a task that forwards the request body would send them. */
    readonly raw?: RawBody | null;
  };
  /** What ${env:NAME} reads when a condition or a check needs the real value (never printed). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The kinds the application was compiled with. */
  readonly kinds: TaskKinds;
  /** As serve would run the tasks; absent: every kind's defaults (dry-run takes none of serve's task options). */
  readonly taskSettings?: TaskSettings;
}

export function buildPlan(application: Application, options: PlanOptions): Plan {
  const raw = options.parameters;
  const parsed = raw === null ? null : parseEnvironment(raw);
  return {
    // The request's hash authenticates it like a password: shown masked, as serve never logs it.
    simulation:
      raw === null
        ? null
        : {
            parameters: [...(options.delivery?.given ?? raw).entries()].map(
              ([name, values]) => [name, name === 'hash' ? values.map(() => SECRET_MASK) : values] as [string, string[]],
            ),
            environment: parsed?.ok === true ? parsed.environment : 'live',
            // Only with --body or --header: plans of other requests keep exactly their shape.
            ...(options.delivery === undefined ? {} : deliveryInfo(options.delivery)),
          },
    endpoints: options.endpoints.map((endpoint) => new EndpointPlanner(application, endpoint, options).plan()),
  };
}

function deliveryInfo(delivery: NonNullable<PlanOptions['delivery']>): Pick<SimulationInfo, 'body' | 'headers'> {
  return { ...(delivery.body === null ? {} : { body: delivery.body }), ...(delivery.headers.length === 0 ? {} : { headers: delivery.headers }) };
}

const NOT_RUN = 'the primary action fails, so no task runs';
const HONEYPOT_NOT_RUN = 'the honeypot is filled, so no task runs';
const HANDSHAKE_NOT_RUN = 'serve answers the handshake itself, so no task runs';

class EndpointPlanner {
  private readonly notes: string[] = [];
  private readonly input: DecisionInput | null;
  /** The --body as received, for a task that forwards it; null without one. */
  private readonly simulatedBody: RawBody | null;
  private readonly taskSettings: TaskSettings;

  constructor(
    private readonly application: Application,
    private readonly endpoint: Endpoint,
    private readonly options: PlanOptions,
  ) {
    this.simulatedBody = options.delivery?.raw ?? null;
    this.taskSettings = options.taskSettings ?? DEFAULT_TASK_SETTINGS;
    // dry-run checks no hash: it has the configuration, not the request's secret.
    this.input =
      options.parameters === null
        ? null
        : {
            application,
            endpoint,
            raw: options.parameters,
            sources: options.sources ?? NO_SOURCES,
            info: SIMULATED_REQUEST,
            env: options.env,
            secretKeys: null,
          };
  }

  plan(): EndpointPlan {
    const { endpoint } = this;
    const responses = listResponses(this.application, endpoint);
    const base = {
      name: endpoint.name,
      line: endpoint.position.line,
      tasksMode: endpoint.tasksMode,
      responses,
      stages: endpoint.taskGraph.stages,
      edges: endpoint.taskGraph.edges,
      notes: this.notes,
      protections: describeProtections(endpoint.protections),
      webhook: describeWebhook(endpoint.webhook),
      deduplication: describeDeduplication(endpoint),
    };
    if (this.input === null) {
      return {
        ...base,
        response: responses.find((r) => r.condition === null)!,
        responseChosen: false,
        responseNote: null,
        failure: null,
        tasks: endpoint.tasks.map((t) => this.task(t, null, null)),
        ignoredParameters: [],
        boundParameters: null,
      };
    }
    // serve checks a webhook's signature and handshake before anything else: a handshake ends the request there.
    const webhook =
      base.webhook === null
        ? null
        : simulateWebhook(
            base.webhook,
            endpoint.webhook!,
            simulatedHandshakeRequest(
              this.simulatedBody,
              this.options.delivery?.given ?? this.input!.raw,
              this.input!.sources.headers,
              this.input!.sources.json?.document,
            ),
          );
    if (webhook?.answer) {
      const failure = webhook.answer.kind === 'refused' ? { detail: webhook.answer.detail, status: webhook.answer.status, endpoint: endpoint.name } : null;
      return {
        ...base,
        webhook: { ...base.webhook!, checks: webhook.checks },
        response: handshakeResponse(webhook.answer, endpoint.webhook!.handshake!.scheme),
        responseChosen: true,
        responseNote: null,
        failure,
        tasks: endpoint.tasks.map((t) => this.task(t, null, HANDSHAKE_NOT_RUN)),
        ignoredParameters: [],
        boundParameters: null,
      };
    }
    // The honeypot and CAPTCHA fields are read without being declared: not ignored.
    const guardFields = [endpoint.protections?.honeypot, endpoint.protections?.captcha?.parameter];
    const ignored = ignoredParameters(endpoint, this.options.delivery?.given ?? this.input.raw)
      .filter((name) => !guardFields.includes(name))
      .map((name) => ({ name, suggestion: closest(name, endpoint.parametersByName.keys()) ?? null }));
    // A --param named like a parameter with another source reaches it no more than a query parameter would in serve: said.
    for (const name of (this.options.delivery?.given ?? this.input.raw).keys()) {
      const source = endpoint.parametersByName.get(name)?.source;
      if (source === undefined || source.kind === 'name') continue;
      const from = source.kind === 'header' ? `the header ${source.header} (give --header)` : `the JSON body with ${source.path} (give --body)`;
      this.notes.push(`--param ${name} is not used: "${name}" is read from ${from}`);
    }
    // With <deduplicate>: its key, and the tasks' downstream keys derived from it as serve derives them.
    const deduplicated = simulateDeduplication(endpoint, base.deduplication, decideRequest(this.input));
    const decision = deduplicated.decision;
    // The checks serve makes before preparation (runtime/pipeline.ts, guarded): a filled
    // honeypot answers as the success without tasks, a missing CAPTCHA token is a 403.
    const checks =
      endpoint.protections === null
        ? null
        : simulateProtections(endpoint.protections, this.input.raw, decision.kind === 'proceed' ? decision.scope.parameters : null, SIMULATED_REQUEST.clientIp);
    const caught = checks?.some((c) => c.outcome === 'caught') === true;
    const captchaRefused = checks?.some((c) => c.check === 'captcha' && c.outcome === 'refused') === true;
    // The same check serve makes before its first side effect: a value no task can use fails
    // the request, and nothing is sent (so nothing is printed as sent).
    const preparation =
      decision.kind === 'proceed' && !caught && !captchaRefused
        ? prepareBeforeSideEffects(
            { kinds: this.options.kinds, application: this.application, uploads: [], body: this.simulatedBody, settings: this.taskSettings },
            decision,
          )
        : null;
    const outcome = captchaRefused
      ? refusedOutcome(endpoint, { status: 403, detail: 'the CAPTCHA was not solved', internal: 'no CAPTCHA token' })
      : preparation !== null && !preparation.ok
        ? refusedOutcome(preparation.endpoint, preparation.failure)
        : this.outcome(decision);
    const runs = (outcome.failure === null || outcome.deferred) && !caught;
    const notRun = caught ? HONEYPOT_NOT_RUN : NOT_RUN;
    return {
      ...base,
      protections: base.protections === null ? null : { ...base.protections, checks },
      webhook: base.webhook === null || webhook === null ? null : { ...base.webhook, checks: webhook.checks },
      deduplication: deduplicated.plan,
      response: outcome.response,
      responseChosen: outcome.chosen,
      responseNote: outcome.note,
      failure: outcome.failure,
      tasks: endpoint.tasks.map((t) => (runs && decision.kind === 'proceed' ? this.task(t, decision, null) : this.task(t, null, notRun))),
      ignoredParameters: ignored,
      boundParameters: this.options.delivery !== undefined && decision.kind === 'proceed' ? this.bound(decision) : null,
    };
  }

  /**
   * The endpoint's parameters as the decision bound them, each with its source. Values a task
   * treats as secrets (an Authorization header it sends) print as the task's request does: ***.
   */
  private bound(decision: Proceed): BoundParameter[] {
    const { endpoint } = this;
    const input = this.input!;
    const secret = new Set(endpoint.tasks.flatMap((task) => this.options.kinds.of(task).secretParameters?.(task) ?? []));
    return endpoint.parameters.map((declaration) => {
      const source = declaration.source;
      const sent = source.kind === 'name' ? input.raw.get(declaration.name) : sourcedValues(declaration, input.sources);
      const value = decision.scope.parameters.get(declaration.name) ?? '';
      return {
        name: declaration.name,
        value: secret.has(declaration.name) || declaration.name === 'hash' ? SECRET_MASK : value,
        source:
          source.kind === 'jsonpath'
            ? { kind: 'jsonpath', path: source.path }
            : source.kind === 'header'
              ? { kind: 'header', header: source.header }
              : { kind: 'name' },
        isDefault: sent === undefined || !Array.isArray(sent) || sent.length === 0,
      };
    });
  }

  /** What the request gets, as serve decides it: the chosen response, or the failure and its <error> answer. */
  private outcome(decision: Decision): Outcome {
    switch (decision.kind) {
      case 'refused':
        return refusedOutcome(decision.endpoint, decision.failure);
      case 'undecided': {
        // serve would fail the same way; say so rather than guess.
        const fallback = listResponses(this.application, decision.endpoint).find((r) => r.condition === null)!;
        return {
          response: fallback,
          chosen: false,
          note: `the response cannot be chosen before the tasks run: ${decision.reason}`,
          failure: null,
          deferred: false,
        };
      }
      case 'proceed': {
        const { success } = decision;
        // A deferred response is decided by serve after the tasks, with their values; here
        // without them, so what needs them is noted rather than checked.
        const response = decision.response ?? decideResponse(this.input!, decision, null);
        return this.responseOutcome(decision, success, response);
      }
    }
  }

  private responseOutcome(decision: Proceed, success: SuccessResponse, response: ResponseDecision): Outcome {
    const { endpoint } = decision;
    const deferred = success.deferred;
    const own = describeSuccess(this.application, endpoint, success, null);
    switch (response.kind) {
      case 'refused':
        return refusedOutcome(endpoint, response.failure, deferred);
      case 'undecidable':
        if (success.action.kind === 'forward') {
          return {
            response: own,
            chosen: true,
            note: `the forwarded parameters are only known when the request runs (${response.reason})`,
            failure: null,
            deferred,
          };
        }
        this.notes.push(
          `${endpoint.name}: "${response.template.source}" cannot be checked without ${deferred ? 'the task results' : 'its value'} (${response.reason})`,
        );
        return {
          response: describeSuccess(this.application, endpoint, success, shownTarget(success.action, this.shown(decision.scope))),
          chosen: true,
          note: null,
          failure: null,
          deferred,
        };
      case 'forward': {
        const inner = this.outcome(response.target);
        // The target refused the request (its parameters): its <error> answers, as in serve.
        if (response.target.kind === 'refused') return { ...inner, deferred };
        return {
          response: { ...own, status: inner.response.status, expanded: `${response.target.endpoint.name}: ${describeInner(inner.response)}` },
          chosen: true,
          note: inner.note,
          failure: inner.failure,
          deferred,
        };
      }
      case 'respond':
      case 'static':
      case 'url':
        return {
          response: describeSuccess(this.application, endpoint, success, shownTarget(success.action, this.shown(decision.scope))),
          chosen: true,
          note: null,
          failure: null,
          deferred,
        };
    }
  }

  private task(task: Task, decision: Proceed | null, notRunReason: string | null): TaskPlan {
    const { endpoint } = this;
    const base = {
      id: task.id,
      kind: task.kind,
      className: task.className,
      line: task.position.line,
      dependsOn: endpoint.taskGraph.dependsOn.get(task.id) ?? [],
      inputs: task.inputs,
      outputs: task.outputs.map((o) => o.name),
      condition: task.condition?.text ?? null,
      ignoreIfError: task.ignoreIfError,
      timeoutMs: task.timeoutMs,
      retries: task.retries,
    };
    if (notRunReason !== null) return { ...base, willRun: false, willRunReason: notRunReason, detail: null, failure: null };
    if (decision === null) return { ...base, willRun: null, willRunReason: null, detail: null, failure: null };

    const real = decision.scope;
    const verdict = this.decide(task.condition, real);
    if (verdict.value === false) return { ...base, willRun: false, willRunReason: verdict.reason, detail: null, failure: null };
    const kind = this.options.kinds.of(task);
    try {
      const detail = kind.describe(task, {
        real,
        shown: this.shown(real),
        request: { separator: endpoint.separator, uploads: [], body: this.simulatedBody, application: this.application },
        settings: this.taskSettings,
        decide: (condition) => this.decide(condition, real).value,
        note: (text) => {
          const note = `${endpoint.name}/${text}`;
          if (!this.notes.includes(note)) this.notes.push(note);
        },
      });
      return { ...base, willRun: verdict.value, willRunReason: verdict.reason, detail, failure: null };
    } catch (error) {
      return { ...base, willRun: verdict.value, willRunReason: verdict.reason, detail: null, failure: describeError(error) };
    }
  }

  /** null when the condition needs a task result or a variable that is not set here. */
  private decide(condition: Condition | null, real: ExpansionScope): { readonly value: boolean | null; readonly reason: string | null } {
    if (condition === null) return { value: true, reason: null };
    const templates = condition.kind === 'compare' ? [condition.left, condition.right] : [condition.left];
    const intermediate = templates.flatMap((t) => t.parts.flatMap((p) => (p.kind === 'intermediate' ? [p.name] : [])));
    if (intermediate.length > 0) return { value: null, reason: `the condition uses ${[...new Set(intermediate)].join(', ')}, known only when the tasks run` };
    try {
      const holds = evaluateCondition(condition, real, this.endpoint.separator);
      return { value: holds, reason: holds ? 'the condition holds' : 'the condition is false' };
    } catch (error) {
      if (!(error instanceof MissingValueError)) throw error;
      return { value: null, reason: `the condition cannot be decided here: ${error.message}` };
    }
  }

  /** For printing: env values as `***`, intermediate values as `<from TASK>`, nothing escaped. */
  private shown(real: ExpansionScope): ExpansionScope {
    const producers = new Map<string, string>();
    for (const task of this.endpoint.tasks) for (const o of task.outputs) producers.set(o.name, task.id);
    const verbatim = (part: PlaceholderPart): string | undefined => {
      if (part.kind === 'env') return SECRET_MASK;
      if (part.kind === 'intermediate') return `<from ${producers.get(part.name) ?? part.name}>`;
      return undefined;
    };
    return { ...real, verbatim };
  }
}
