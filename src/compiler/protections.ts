// <honeypot>, <captcha> and <rate-limit> on an endpoint or folder: read once, inherited down the
// folders as parameters are (a lower <honeypot> or <captcha> replaces the folder's; rate limits
// add up, each one applies), and decided here which endpoint has which check, so an endpoint
// without any costs the request path nothing (Endpoint.protections is null).

import type { CaptchaProvider, CaptchaRule, ParameterDeclaration, Protections, RateLimitRule } from './ast.js';
import { readElement, requireAttribute, single, type CompileContext, type ReadElement } from './context.js';
import { compileTemplate, ENV_ONLY_SCOPE, literalTemplate } from './templates.js';
import type { Template } from '../template/types.js';
import { parseDuration } from '../units.js';

export const PROTECTION_ELEMENTS = ['honeypot', 'captcha', 'rate-limit'] as const;

export const CAPTCHA_PROVIDERS: readonly CaptchaProvider[] = ['turnstile', 'hcaptcha', 'recaptcha', 'altcha'];

/** Each provider's documented siteverify URL and the form field its widget fills. */
export const CAPTCHA_DEFAULTS: Readonly<Record<CaptchaProvider, { readonly verifyUrl: string; readonly parameter: string }>> = {
  turnstile: { verifyUrl: 'https://challenges.cloudflare.com/turnstile/v0/siteverify', parameter: 'cf-turnstile-response' },
  hcaptcha: { verifyUrl: 'https://api.hcaptcha.com/siteverify', parameter: 'h-captcha-response' },
  recaptcha: { verifyUrl: 'https://www.google.com/recaptcha/api/siteverify', parameter: 'g-recaptcha-response' },
  altcha: { verifyUrl: '', parameter: 'altcha' },
};

const PARAMETER_NAME = /^[A-Za-z0-9_.-]+$/;

/** What a folder hands down. */
export interface InheritedProtections {
  readonly honeypot: string | null;
  readonly captcha: CaptchaRule | null;
  readonly limits: readonly RateLimitRule[];
}

export const NO_PROTECTIONS: InheritedProtections = { honeypot: null, captcha: null, limits: [] };

/** The protections in force at a folder or endpoint: its own elements over the inherited ones. */
export function readProtections(
  ctx: CompileContext,
  read: ReadElement,
  inherited: InheritedProtections,
  parameters: ReadonlyMap<string, ParameterDeclaration>,
): InheritedProtections {
  let honeypot = inherited.honeypot;
  const trap = single(ctx, read, 'honeypot');
  if (trap) {
    const r = readElement(ctx, trap, { attributes: ['parameter'], children: [] });
    const name = requireAttribute(ctx, r, 'parameter');
    if (name && !PARAMETER_NAME.test(name.value)) ctx.diagnostics.report('invalid-parameter-name', name.position, name.value);
    else if (name) honeypot = name.value;
  }
  let captcha = inherited.captcha;
  const captchaElement = single(ctx, read, 'captcha');
  if (captchaElement) captcha = readCaptcha(ctx, captchaElement) ?? captcha;
  const own = read.children('rate-limit');
  let limits = inherited.limits;
  if (own.length > 0) {
    const added: RateLimitRule[] = [];
    for (const el of own) {
      const rule = readRateLimit(ctx, el, parameters);
      if (rule) added.push(rule);
    }
    limits = [...inherited.limits, ...added];
  }
  return { honeypot, captcha, limits };
}

/** For the Endpoint: null when nothing is to be checked. */
export function endpointProtections(p: InheritedProtections): Protections | null {
  if (p.honeypot === null && p.captcha === null && p.limits.length === 0) return null;
  const limitsByParameter = p.limits.filter((l) => l.byParameter !== null);
  return {
    honeypot: p.honeypot,
    captcha: p.captcha,
    limitsByClient: p.limits.filter((l) => l.byParameter === null),
    limitsByParameter,
    afterBinding: p.honeypot !== null || p.captcha !== null || limitsByParameter.length > 0,
  };
}

function readCaptcha(ctx: CompileContext, element: ReadElement['element']): CaptchaRule | null {
  const r = readElement(ctx, element, { attributes: ['provider', 'secret', 'hmac-key', 'parameter', 'min-score', 'verify-url'], children: [] });
  const providerAttr = requireAttribute(ctx, r, 'provider');
  if (!providerAttr) return null;
  const provider = providerAttr.value as CaptchaProvider;
  if (!CAPTCHA_PROVIDERS.includes(provider)) {
    const suggestion = ctx.suggestions.closest(providerAttr.value, CAPTCHA_PROVIDERS);
    ctx.diagnostics.report(
      'invalid-value',
      providerAttr.position,
      'provider',
      providerAttr.value,
      `${CAPTCHA_PROVIDERS.map((p) => `"${p}"`).join(', ')}${suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`}`,
    );
    return null;
  }
  let ok = true;
  const keyName = provider === 'altcha' ? 'hmac-key' : 'secret';
  const wrongKey = r.attr(provider === 'altcha' ? 'secret' : 'hmac-key');
  if (wrongKey) {
    ctx.diagnostics.report('unknown-attribute', wrongKey.position, wrongKey.name, 'captcha', keyName);
    ok = false;
  }
  const keyAttr = requireAttribute(ctx, r, keyName);
  let secret = null;
  if (keyAttr) {
    if (!/^\$\{env:[^}]+\}$/.test(keyAttr.value.trim())) ctx.diagnostics.report('secret-in-file', keyAttr.position, keyName);
    secret = compileTemplate(ctx, keyAttr.value.trim(), 'none', ENV_ONLY_SCOPE, keyAttr.position);
  }
  if (secret === null) ok = false;
  const parameterAttr = r.attr('parameter');
  if (parameterAttr && !PARAMETER_NAME.test(parameterAttr.value)) {
    ctx.diagnostics.report('invalid-parameter-name', parameterAttr.position, parameterAttr.value);
    ok = false;
  }
  const minScore = captchaMinScore(ctx, r, provider);
  const verifyUrl = captchaVerifyUrl(ctx, r, provider);
  if (!ok || secret === null || minScore === undefined || verifyUrl === null) return null;
  return { provider, secret, parameter: parameterAttr?.value ?? CAPTCHA_DEFAULTS[provider].parameter, minScore, verifyUrl, position: element.position };
}

/** null: none given; undefined: reported as bad. */
function captchaMinScore(ctx: CompileContext, r: ReadElement, provider: CaptchaRule['provider']): number | null | undefined {
  const scoreAttr = r.attr('min-score');
  if (!scoreAttr) return null;
  if (provider !== 'recaptcha') {
    ctx.diagnostics.report('invalid-value', scoreAttr.position, 'min-score', scoreAttr.value, 'no min-score: only provider="recaptcha" (v3) gives a score');
    return undefined;
  }
  if (!/^(0(\.\d+)?|1(\.0+)?)$/.test(scoreAttr.value)) {
    ctx.diagnostics.report('invalid-value', scoreAttr.position, 'min-score', scoreAttr.value, 'a number from 0 to 1, such as 0.5');
    return undefined;
  }
  return Number(scoreAttr.value);
}

/** The provider's own unless given; null after reporting why it is bad. */
function captchaVerifyUrl(ctx: CompileContext, r: ReadElement, provider: CaptchaRule['provider']): Template | null {
  const urlAttr = r.attr('verify-url');
  if (!urlAttr) return literalTemplate(ctx, CAPTCHA_DEFAULTS[provider].verifyUrl, 'none');
  const value = urlAttr.value.trim();
  if (provider === 'altcha') {
    ctx.diagnostics.report('invalid-value', urlAttr.position, 'verify-url', urlAttr.value, 'no verify-url: altcha is verified by the service itself');
    return null;
  }
  if (!value.includes('${') && (!/^https?:\/\/\S+$/.test(value) || !URL.canParse(value))) {
    ctx.diagnostics.report('invalid-value', urlAttr.position, 'verify-url', urlAttr.value, 'an absolute http or https URL');
    return null;
  }
  return compileTemplate(ctx, value, 'none', ENV_ONLY_SCOPE, urlAttr.position);
}

function readRateLimit(ctx: CompileContext, element: ReadElement['element'], parameters: ReadonlyMap<string, ParameterDeclaration>): RateLimitRule | null {
  const r = readElement(ctx, element, { attributes: ['requests', 'per', 'by', 'burst'], children: [] });
  const requestsAttr = requireAttribute(ctx, r, 'requests');
  const perAttr = requireAttribute(ctx, r, 'per');
  let ok = requestsAttr !== undefined && perAttr !== undefined;
  const count = (attr: typeof requestsAttr, min: number) => {
    if (!attr) return 0;
    if (!/^\d{1,9}$/.test(attr.value) || Number(attr.value) < min) {
      ctx.diagnostics.report('invalid-value', attr.position, attr.name, attr.value, `a whole number of at least ${min}`);
      ok = false;
      return 0;
    }
    return Number(attr.value);
  };
  const requests = count(requestsAttr, 1);
  const burstAttr = r.attr('burst');
  const burst = burstAttr ? count(burstAttr, 0) : 0;
  let perMs = 0;
  if (perAttr) {
    const ms = parseDuration(perAttr.value);
    if (ms === null || ms % 1000 !== 0) {
      ctx.diagnostics.report('invalid-value', perAttr.position, 'per', perAttr.value, 'a window of whole seconds with a unit, such as 30s, 1m or 1h');
      ok = false;
    } else perMs = ms;
  }
  let byParameter: string | null = null;
  const byAttr = r.attr('by');
  if (byAttr && byAttr.value !== 'client-ip') {
    if (!byAttr.value.startsWith('parameter:')) {
      ctx.diagnostics.report('invalid-value', byAttr.position, 'by', byAttr.value, '"client-ip" or "parameter:NAME"');
      ok = false;
    } else {
      byParameter = byAttr.value.slice('parameter:'.length);
      if (!parameters.has(byParameter)) {
        ctx.diagnostics.report('unknown-rate-limit-parameter', byAttr.position, byParameter, ctx.suggestions.closest(byParameter, parameters.keys()));
        ok = false;
      }
    }
  }
  if (!ok) return null;
  const id = `${element.position.line}:${element.position.column}`;
  return { requests, perMs, byParameter, burst, id, position: element.position };
}
