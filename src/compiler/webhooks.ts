// <signature> and <handshake> on an endpoint or folder (docs/language.md, "<signature>" and "<handshake>"):
// read once, inherited down the folders (an endpoint's or folder's own <signature> elements
// replace those above, as its own <handshake> does), and compiled into the typed descriptions
// of src/webhooks, keys and all, so the request path only verifies.
//
// The secrets are expanded here, from the environment the compile reads: a description holds a
// KeyObject, never text. A secret whose ${env:NAME} is not set has been reported (env-not-set: an
// error in serve, a warning where the file is only checked), and is given a random key nobody
// knows, so validate and dry-run go on and nothing could ever verify against it.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Signatures, WebhookChecks } from './ast.js';
import { readElement, requireAttribute, single, type CompileContext, type ReadElement } from './context.js';
import { compileTemplate, ENV_ONLY_SCOPE } from './templates.js';
import type { XmlAttribute, XmlElement } from './xml.js';
import type { Position } from '../position.js';
import { describeSignature, type SignatureAttributes, type SignatureProblem, type Suggest } from '../webhooks/describe-signature.js';
import { OPTIONAL_ATTRIBUTES, PROPERTY } from '../webhooks/signature-attributes.js';
import { SENDERS } from '../webhooks/senders.js';
import { describeHandshake, type HandshakeProblem } from '../webhooks/describe-handshake.js';
import type { HandshakeDescription } from '../webhooks/handshake.js';
import { SIGNATURE_SCHEMES, type SignatureDescription } from '../webhooks/signature-description.js';

export const WEBHOOK_ELEMENTS = ['signature', 'handshake'] as const;

const SIGNATURE_ATTRIBUTES = ['scheme', 'secret', 'public-key', ...OPTIONAL_ATTRIBUTES] as const;
const HANDSHAKE_ATTRIBUTES = ['scheme', 'secret', 'verify-token'] as const;

/** What a folder hands down. */
export interface InheritedWebhook {
  readonly signatures: Signatures | null;
  readonly handshake: HandshakeDescription | null;
}

export const NO_WEBHOOK: InheritedWebhook = { signatures: null, handshake: null };

/** The checks in force at a folder or endpoint: its own elements over the inherited ones. */
export function readWebhook(ctx: CompileContext, read: ReadElement, inherited: InheritedWebhook): InheritedWebhook {
  let signatures = inherited.signatures;
  const own = read.children('signature');
  if (own.length > 0) {
    const compiled: SignatureDescription[] = [];
    for (const element of own) {
      const signature = readSignature(ctx, element);
      if (signature !== null) compiled.push(signature);
    }
    // A broken one is reported; the folder's are not used in its place.
    signatures = compiled.length > 0 ? (compiled as unknown as Signatures) : null;
  }
  let handshake = inherited.handshake;
  const handshakeElement = single(ctx, read, 'handshake');
  if (handshakeElement) handshake = readHandshake(ctx, handshakeElement);
  return { signatures, handshake };
}

/** For the Endpoint: null when there is nothing to check. */
export function endpointWebhook(w: InheritedWebhook): WebhookChecks | null {
  if (w.signatures !== null) return { signatures: w.signatures, handshake: w.handshake };
  if (w.handshake !== null) return { signatures: null, handshake: w.handshake };
  return null;
}

function readSignature(ctx: CompileContext, element: XmlElement): SignatureDescription | null {
  const r = readElement(ctx, element, { attributes: SIGNATURE_ATTRIBUTES, children: [] });
  const schemeAttr = requireAttribute(ctx, r, 'scheme');
  if (!schemeAttr) return null;
  const scheme = schemeAttr.value.trim();
  const publicKeyScheme = PUBLIC_KEY_SCHEMES.has(scheme);
  const secretAttr = r.attr('secret');
  const publicKeyAttr = r.attr('public-key');
  // The key a scheme needs is required here, where a missing one is reported as always; the
  // other is left for describeSignature to refuse as not for the scheme.
  if (!publicKeyScheme && !secretAttr && SIGNATURE_SCHEMES.includes(scheme)) {
    requireAttribute(ctx, r, 'secret');
    return null;
  }
  const secret = secretAttr ? readSecret(ctx, secretAttr, 'secret') : undefined;
  const publicKey = publicKeyAttr ? readPublicKeyText(ctx, publicKeyAttr) : undefined;
  if (secret === null || publicKey === null) return null;
  const optional: Record<string, string | undefined> = {};
  for (const attribute of OPTIONAL_ATTRIBUTES) optional[PROPERTY[attribute]] = r.attr(attribute)?.value;
  const attributes: SignatureAttributes = {
    ...optional,
    scheme: schemeAttr.value,
    secret: secret === undefined ? undefined : secret.known ? secret.value : unknownSecret(scheme),
    publicKey: publicKey === undefined ? undefined : publicKey.known ? publicKey.value : unknownPublicKey(scheme),
  };
  const outcome = describeSignature(attributes, suggest(ctx));
  if (outcome.ok) return outcome.signature;
  for (const problem of outcome.problems) reportProblem(ctx, r, problem, 'signature', schemeAttr.value);
  return null;
}

/** The schemes verified with the sender's public key rather than a shared secret. */
const PUBLIC_KEY_SCHEMES = new Set([...SENDERS.filter((s) => s.key === 'public-key').map((s) => s.name), 'ed25519', 'ecdsa-p256']);

/** A public key's text, expanded from the environment; a literal is no secret, so no warning. Null after reporting a template that does not compile. */
function readPublicKeyText(ctx: CompileContext, attr: XmlAttribute): { readonly value: string; readonly known: boolean } | null {
  const template = compileTemplate(ctx, attr.value.trim(), 'none', ENV_ONLY_SCOPE, attr.position);
  if (template === null) return null;
  return expandEnv(ctx, template.parts);
}

/** A public key of the scheme's type nobody holds the private half of: for a variable that is not set here. */
function unknownPublicKey(scheme: string): string {
  const entry = SENDERS.find((s) => s.name === scheme);
  const type = (entry?.verify ?? scheme) === 'ed25519' ? 'ed25519' : 'ec';
  const { publicKey } = type === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return publicKey.export({ type: 'spki', format: 'pem' }).toString();
}

function readHandshake(ctx: CompileContext, element: XmlElement): HandshakeDescription | null {
  const r = readElement(ctx, element, { attributes: HANDSHAKE_ATTRIBUTES, children: [] });
  const schemeAttr = requireAttribute(ctx, r, 'scheme');
  if (!schemeAttr) return null;
  let ok = true;
  const value = (name: 'secret' | 'verify-token'): string | undefined => {
    const attr = r.attr(name);
    if (!attr) return undefined;
    const secret = readSecret(ctx, attr, name);
    if (secret === null) {
      ok = false;
      return undefined;
    }
    return secret.known ? secret.value : randomBytes(32).toString('base64');
  };
  const outcome = describeHandshake({ scheme: schemeAttr.value, secret: value('secret'), verifyToken: value('verify-token') }, suggest(ctx));
  if (!ok) return null;
  if (outcome.ok) return outcome.handshake;
  for (const problem of outcome.problems) reportProblem(ctx, r, problem, 'handshake', schemeAttr.value);
  return null;
}

/**
 * A secret attribute's value: its template expanded from the environment, and whether every
 * variable it names is set. A literal is a warning (secret-in-file); null after reporting a
 * template that does not compile.
 */
function readSecret(ctx: CompileContext, attr: XmlAttribute, name: string): { readonly value: string; readonly known: boolean } | null {
  const source = attr.value.trim();
  if (!/^\$\{env:[^}]+\}$/.test(source)) ctx.diagnostics.report('secret-in-file', attr.position, name);
  const template = compileTemplate(ctx, source, 'none', ENV_ONLY_SCOPE, attr.position);
  if (template === null) return null;
  return expandEnv(ctx, template.parts);
}

/** A template of literals and ${env:…}: its value, and whether every variable it names is set. */
function expandEnv(ctx: CompileContext, parts: NonNullable<ReturnType<typeof compileTemplate>>['parts']): { readonly value: string; readonly known: boolean } {
  let value = '';
  for (const part of parts) {
    if (part.kind === 'literal') value += part.text;
    else if (part.kind === 'env') {
      const set = ctx.env[part.name];
      if (set === undefined) return { value: '', known: false };
      value += set;
    }
  }
  return { value, known: true };
}

/** A secret that is valid for the scheme and that nobody knows: for a variable that is not set here. */
function unknownSecret(scheme: string): string {
  const bytes = randomBytes(32).toString('base64');
  return SENDERS.find((s) => s.name === scheme)?.key === 'whsec' ? `whsec_${bytes}` : bytes;
}

function suggest(ctx: CompileContext): Suggest {
  return (name, candidates) => ctx.suggestions.closest(name, candidates);
}

/** Each problem at its attribute (a missing one at the element), under its code from the diagnostics table. */
function reportProblem(ctx: CompileContext, r: ReadElement, problem: SignatureProblem | HandshakeProblem, element: string, scheme: string): void {
  const at: Position = r.attr(problem.attribute)?.position ?? r.element.position;
  switch (problem.code) {
    case 'unknown-signature-scheme':
    case 'unknown-handshake-scheme':
      ctx.diagnostics.report(problem.code, at, problem.scheme, problem.suggestion);
      return;
    case 'missing-attribute':
      ctx.diagnostics.report('missing-attribute', at, problem.attribute, `${element} scheme="${scheme.trim()}"`);
      return;
    case 'invalid-value':
      ctx.diagnostics.report('invalid-value', at, `${problem.attribute} on <${element}>`, problem.value, problem.expected);
      return;
    case 'attribute-not-for-scheme':
    case 'invalid-signature-secret':
    case 'invalid-public-key':
    case 'invalid-signed-template':
      ctx.diagnostics.report(problem.code, at, problem.message);
      return;
  }
}
