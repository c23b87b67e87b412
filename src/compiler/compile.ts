// From an endpoints.xml path to an Application and every diagnostic, in one pass.

import { SourceTexts } from './locate.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Application, Endpoint, EmailSettings, SecuritySettings } from './ast.js';
import type { Position } from '../position.js';
import type { CompileContext } from './context.js';
import type { Diagnostic } from './diagnostics.js';
import { Diagnostics } from './diagnostics.js';
import { compileFolder } from './endpoints.js';
import type { CompileOptions, CompileResult, TasksRunHere } from './options.js';
import { compileEmailSettings, compileSecurity } from './settings.js';
import { Suggestions } from './suggest.js';
import { findCycles, SharedTaskGraphs } from './task-graph.js';
import { TaskKindIndex } from './tasks.js';
import { SharedTemplates } from './shared-templates.js';
import { decodeXml, parseXml, type XmlElement } from './xml.js';
import { readConfigurationFile } from './read-file.js';

/**
 * Email tasks are looked for in the tree, not among the compiled endpoints: an endpoint dropped
 * for another error still needs SMTP settings, and all problems show in one run. A settings file
 * that is present but broken is reported in that file, not here again.
 */
function checkSmtpKnown(
  root: Parameters<typeof findMailTask>[0],
  taskKinds: TaskKindIndex,
  directory: string,
  options: CompileOptions,
  diagnostics: Diagnostics,
): void {
  const firstEmail = findMailTask(root, taskKinds.mailClasses, options.tasksRunHere ?? 'every-endpoint');
  const smtpKnown = options.smtpUrlGiven === true || existsSync(path.join(directory, 'email-sending-configuration.xml'));
  // Its severity per command is in the table: dry-run does not report it (it sends nothing).
  if (firstEmail && !smtpKnown) diagnostics.report('smtp-not-configured', firstEmail.position);
}

export function compileApplication(file: string, options: CompileOptions): CompileResult {
  const diagnostics = new Diagnostics(options.mode);
  options.onProgress?.({ phase: 'reading' });
  const read = readConfigurationFile(file);
  if (!read.ok)
    return { application: null, diagnostics: [], errorCount: 0, warningCount: 0, unreadable: `Cannot read ${file}: ${read.reason}.`, sourceTexts: NO_TEXTS };
  const ctx = compileContext(file, options, diagnostics);

  const securityRoot = readSettingsFile(ctx, 'security.xml', 'security');
  const security: SecuritySettings | null = securityRoot ? compileSecurity(ctx, securityRoot) : null;
  const emailRoot = readSettingsFile(ctx, 'email-sending-configuration.xml', 'email-sending-configuration');
  const email: EmailSettings | null = emailRoot ? compileEmailSettings(ctx, emailRoot) : null;

  const endpoints: Endpoint[] = [];
  // validate reads only the diagnostics: an endpoint is compiled and checked, then let go. Kept,
  // the AST of a large application is what garbage collection spends most of its time copying.
  const store = options.diagnosticsOnly === true ? discard : (endpoint: Endpoint) => void endpoints.push(endpoint);
  compileEndpointsFile(ctx, read.bytes, options, store);

  const sorted = sortDiagnostics(diagnostics.list, file);
  const errorCount = sorted.filter((d) => d.severity === 'error').length;
  const warningCount = sorted.length - errorCount;
  const final = errorCount > 0 || options.diagnosticsOnly === true ? null : withForwardedBodies(endpoints);
  const application: Application | null =
    final === null
      ? null
      : {
          file,
          directory: ctx.directory,
          staticDirectory: ctx.staticDirectory,
          endpoints: final,
          endpointsByName: new Map(final.map((e) => [e.name, e])),
          email,
          security,
        };
  const sourceTexts = options.keepSourceTexts === true && sorted.length > 0 ? ctx.sources.of(sorted) : NO_TEXTS;
  return { application, diagnostics: sorted, errorCount, warningCount, unreadable: null, sourceTexts };
}

const NO_TEXTS: ReadonlyMap<string, string> = new Map();

function compileContext(file: string, options: CompileOptions, diagnostics: Diagnostics): CompileContext {
  const given = path.dirname(file);
  const directory = path.resolve(given);
  const displayPath = (name: string) => (given === '.' ? name : path.join(given, name));
  // validate lets each endpoint go once checked: nothing is worth detaching or sharing.
  const kept = options.diagnosticsOnly !== true;
  return {
    diagnostics,
    mode: options.mode,
    env: options.env ?? process.env,
    publicUrlGiven: options.publicUrlGiven === true,
    smtpUrlGiven: options.smtpUrlGiven === true,
    sources: new SourceTexts(),
    file,
    directory,
    staticDirectory: path.join(directory, 'static'),
    displayPath,
    staticLabel: displayPath('static') + '/',
    fileChecks: new Map(),
    suggestions: new Suggestions(),
    endpointNames: [],
    forwards: [],
    onElementRead: options.onElementRead,
    shared: new SharedTemplates(kept),
    graphs: new SharedTaskGraphs(kept),
  };
}

/** The endpoints.xml's bytes: decoded, parsed, and every endpoint compiled and handed to `keep`, then the checks across endpoints. */
function compileEndpointsFile(ctx: CompileContext, bytes: Buffer, options: CompileOptions, keep: (endpoint: Endpoint) => void): void {
  const { diagnostics, file, directory } = ctx;
  const progress = options.onProgress;
  progress?.({ phase: 'parsing' });
  const decoded = decodeXml(bytes);
  if (decoded.ok) ctx.sources.add(file, decoded.text);
  const parsed = decoded.ok ? parseXml(decoded.text, file, undefined, options.diagnosticsOnly !== true) : decoded;
  if (!parsed.ok) {
    diagnostics.report(parsed.code, { file, line: parsed.line, column: parsed.column }, parsed.message);
    return;
  }
  if (parsed.root.name !== 'endpoint-folder') {
    diagnostics.report('wrong-root-element', parsed.root.position, parsed.root.name, 'endpoint-folder');
    return;
  }
  // A security.xml that is present but broken is reported in that file; <include-in-hash> is not blamed for it too.
  const taskKinds = new TaskKindIndex(options.kinds);
  let compiled = 0;
  compileFolder(
    ctx,
    parsed.root,
    { parameters: new Map(), separator: '||' },
    { hasSecurity: existsSync(path.join(directory, 'security.xml')), taskKinds },
    (endpoint) => {
      keep(endpoint);
      if (progress !== undefined && ++compiled % PROGRESS_EVERY === 0) progress({ phase: 'compiling', endpoints: compiled });
    },
  );
  progress?.({ phase: 'checking', endpoints: compiled });
  checkEndpointNames(ctx);
  checkForwards(ctx);
  checkSmtpKnown(parsed.root, taskKinds, directory, options, diagnostics);
}

function discard(): void {}

/**
 * A forward's target runs its tasks on the request the first endpoint read: an endpoint that
 * may forward (directly or along a chain) to one that keeps the request body keeps it too, for
 * its targets. Decided once here, so the server only reads the flag.
 */
function withForwardedBodies(endpoints: Endpoint[]): Endpoint[] {
  const byName = new Map(endpoints.map((e) => [e.name, e]));
  const reachesKeeper = (start: Endpoint): boolean => {
    // Forward chains are short and acyclic (forward-cycle is an error); `seen` bounds them anyway.
    const seen = new Set<Endpoint>();
    const pending = [start];
    while (pending.length > 0) {
      const next = pending.pop()!;
      if (seen.has(next)) continue;
      seen.add(next);
      if (next.keepsRequestBody) return true;
      for (const success of next.successes) {
        if (success.action.kind !== 'forward') continue;
        const target = byName.get(success.action.endpoint);
        if (target !== undefined) pending.push(target);
      }
    }
    return false;
  };
  const forwarded = endpoints.map((e) =>
    e.keepsRequestBody || !e.successes.some((s) => s.action.kind === 'forward') || !reachesKeeper(e) ? e : { ...e, keepsRequestBody: true },
  );
  return withWebhookBodies(forwarded);
}

/**
 * A <signature> is verified over the body's bytes as received, and a <handshake> reads them: an
 * endpoint with either keeps its own raw body (and accepts any content type). Only its own: a
 * forward is not a delivery, and the endpoints forwarding to it are not signed by the sender.
 */
function withWebhookBodies(endpoints: Endpoint[]): Endpoint[] {
  return endpoints.map((e) => (e.keepsRequestBody || e.webhook === null ? e : { ...e, keepsRequestBody: true }));
}

/** Often enough for a spinner to move, rarely enough to cost nothing. */
const PROGRESS_EVERY = 250;

/** The first <task> of a kind that sends mail, in document order, below folders and endpoints whose tasks run here. */
function findMailTask(folder: XmlElement, mailClasses: ReadonlySet<string>, runHere: TasksRunHere): XmlElement | undefined {
  for (const child of folder.children) {
    if (child.kind !== 'element') continue;
    if (child.name === 'endpoint-folder') {
      const found = findMailTask(child, mailClasses, runHere);
      if (found) return found;
    } else if (child.name === 'endpoint' && runsHere(child, runHere)) {
      const task = child.children.find(
        (t): t is XmlElement => t.kind === 'element' && t.name === 'task' && t.attributes.some((a) => a.name === 'class' && mailClasses.has(a.value)),
      );
      if (task) return task;
    }
  }
  return undefined;
}

function runsHere(endpoint: XmlElement, runHere: TasksRunHere): boolean {
  if (runHere === 'every-endpoint') return true;
  const background = endpoint.attributes.some((a) => a.name === 'tasks' && a.value === 'background');
  return runHere === 'background-only' ? background : !background;
}

function readSettingsFile(ctx: CompileContext, name: string, rootName: string): XmlElement | null {
  const absolute = path.join(ctx.directory, name);
  if (!existsSync(absolute)) return null;
  const display = ctx.displayPath(name);
  const read = readConfigurationFile(absolute);
  if (!read.ok) {
    ctx.diagnostics.report('file-unreadable', { file: display, line: 1, column: 1 }, display, read.reason);
    return null;
  }
  const decoded = decodeXml(read.bytes);
  if (decoded.ok) ctx.sources.add(display, decoded.text);
  const parsed = decoded.ok ? parseXml(decoded.text, display) : decoded;
  if (!parsed.ok) {
    ctx.diagnostics.report(parsed.code, { file: display, line: parsed.line, column: parsed.column }, parsed.message);
    return null;
  }
  if (parsed.root.name !== rootName) {
    ctx.diagnostics.report('wrong-root-element', parsed.root.position, parsed.root.name, rootName);
    return null;
  }
  return parsed.root;
}

function checkEndpointNames(ctx: CompileContext): void {
  const first = new Map<string, number>();
  for (const { name, position } of ctx.endpointNames) {
    const line = first.get(name);
    if (line !== undefined) ctx.diagnostics.report('duplicate-endpoint', position, name, line);
    else first.set(name, position.line);
  }
}

/**
 * Unknown targets, then cycles: found as for tasks (task-graph.ts findCycles), each reported once
 * from its first endpoint in the file, at that endpoint's forward into the cycle. Listing every
 * elementary cycle instead takes exponential time: a dozen endpoints that may all forward to each
 * other would never finish. Overlapping cycles may therefore show only in part until the first
 * are fixed.
 */
function checkForwards(ctx: CompileContext): void {
  const names = new Set(ctx.endpointNames.map((e) => e.name));
  // A forward runs its target after the endpoint: the target "depends on" the forwarding one.
  const forwardedFrom = new Map<string, string[]>();
  for (const f of ctx.forwards) {
    if (!names.has(f.target)) {
      ctx.diagnostics.report('unknown-endpoint', f.position, f.target, ctx.suggestions.closest(f.target, names));
      continue;
    }
    const list = forwardedFrom.get(f.target);
    if (list === undefined) forwardedFrom.set(f.target, [f.from]);
    else list.push(f.from);
  }
  const cycles = findCycles([...names], forwardedFrom);
  if (cycles.length === 0) return;
  const firstForward = new Map<string, Position>();
  for (const f of ctx.forwards) {
    const key = `${f.from}\u0000${f.target}`;
    if (!firstForward.has(key)) firstForward.set(key, f.position);
  }
  for (const cycle of cycles) ctx.diagnostics.report('forward-cycle', firstForward.get(`${cycle[0]}\u0000${cycle[1]}`)!, cycle.join(' -> '));
}

function sortDiagnostics(list: readonly Diagnostic[], mainFile: string): Diagnostic[] {
  return [...list].sort(
    (a, b) => (a.file === mainFile ? 0 : 1) - (b.file === mainFile ? 0 : 1) || a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column,
  );
}
