// The author's regular expressions (a parameter's `pattern`, an output's `regex`): RE2 syntax,
// matched by re2js in time linear in the value's length. A JavaScript RegExp backtracks, and
// one pattern such as `([A-Za-z]+ ?)*` against 41 characters held a worker's event loop for
// ever; with RE2 no value can. Each distinct text is compiled once per process, when the
// configuration is compiled, and the compiled form is shared: it holds no state between
// matches. The measurements behind the choice of engine are in docs/performance.md
// ("Regular expressions in linear time").

import { createRequire } from 'node:module';
import type * as Re2jsModule from 're2js';
import type { RE2JS } from 're2js';
import type { CompileContext } from './context.js';
import { internalized } from './retained.js';
import type { XmlAttribute } from './xml-tree.js';

/** A compiled author regex. Read-only, so one object serves every place the same text is written. */
export interface AuthorRegex {
  /** As the author wrote it. */
  readonly source: string;
  /** Whether the pattern matches the whole of `value`, as HTML's pattern attribute does. */
  matchesWhole(value: string): boolean;
}

export type RegexCompilation =
  | { readonly kind: 'compiled'; readonly regex: AuthorRegex }
  /** A construct of other dialects that RE2 does not have, named for the message ("a backreference \"\\1\""). */
  | { readonly kind: 'unsupported'; readonly construct: string; readonly advice: string }
  /** Not a regular expression in any dialect: RE2's reason. */
  | { readonly kind: 'invalid'; readonly reason: string };

type Re2js = typeof Re2jsModule;
// Loaded on the first author regex: most applications have none, and start-up should not pay
// for an engine they do not use.
let engine: Re2js | null = null;
function re2js(): Re2js {
  if (engine === null) engine = createRequire(import.meta.url)('re2js') as Re2js;
  return engine;
}

class Re2Regex implements AuthorRegex {
  // A #private field: the engine's program is no own key, so whatever walks the AST (the
  // queue's fingerprint of an endpoint, a JSON dump) sees the source alone.
  readonly #compiled: RE2JS;

  constructor(
    readonly source: string,
    compiled: RE2JS,
  ) {
    this.#compiled = compiled;
  }

  matchesWhole(value: string): boolean {
    // Anchored at both ends: the same as RegExp's `^(?:source)$` without flags.
    return this.#compiled.testExact(value);
  }
}

// Thousands of endpoints repeat the same few patterns: each distinct text is compiled once per
// process (the verdict depends on the text alone). Bounded, since a server reloads configurations.
const compilations = new Map<string, RegexCompilation>();
const MEMO_LIMIT = 10_000;

export function compileAuthorRegex(source: string): RegexCompilation {
  let compilation = compilations.get(source);
  if (compilation === undefined) {
    // Kept for as long as the application is served: its own copy, not a slice of the file.
    const kept = internalized(source);
    compilation = compile(kept);
    if (compilations.size >= MEMO_LIMIT) compilations.clear();
    compilations.set(kept, compilation);
  }
  return compilation;
}

/** The regex an attribute holds, or null after reporting, at the attribute, why it cannot be one. */
export function authorRegex(ctx: CompileContext, attr: XmlAttribute): AuthorRegex | null {
  const compilation = compileAuthorRegex(attr.value);
  switch (compilation.kind) {
    case 'compiled':
      return compilation.regex;
    case 'unsupported':
      ctx.diagnostics.report('unsupported-regex', attr.position, attr.value, compilation.construct, compilation.advice);
      return null;
    case 'invalid':
      ctx.diagnostics.report('invalid-regex', attr.position, attr.value, compilation.reason);
      return null;
  }
}

function compile(source: string): RegexCompilation {
  const { RE2JS, RE2JSSyntaxException } = re2js();
  try {
    // No flags: no case folding, `^`/`$` at the ends of the value, `.` not matching "\n";
    // re2js's optional lookbehinds stay off (they are not RE2).
    return { kind: 'compiled', regex: new Re2Regex(source, RE2JS.compile(source)) };
  } catch (error) {
    if (!(error instanceof RE2JSSyntaxException)) throw error;
    return unsupported(error.error, error.input ?? '') ?? { kind: 'invalid', reason: error.input ? `${error.error} \`${error.input}\`` : error.error };
  }
}

// What authors bring from JavaScript, Java (OpenEndpoints) or PCRE that RE2 refuses: named, so
// the message says what to change rather than repeating the parser's words.
function unsupported(error: string, input: string): RegexCompilation | null {
  const found = (construct: string, advice = '') => ({ kind: 'unsupported', construct, advice }) as const;
  if (error === 'invalid escape sequence') {
    if (/^\\[1-9]/.test(input)) return found(`a backreference "${input}"`);
    if (input === '\\k') return found('a named backreference "\\k<…>"');
    if (input === '\\u') return found('a JavaScript "\\u" escape', ' Write a code point as \\x{00C0}.');
    if (input === '\\Z') return found('"\\Z"', ' Write \\z for the end of the value.');
  }
  if (error === 'invalid or unsupported Perl syntax') {
    if (input === '(?=' || input === '(?!') return found(`a lookahead "${input}"`);
    if (input === '(?>') return found('an atomic group "(?>"');
  }
  if (error === 'invalid character class range' && /^\\[pP]\{\w+=/.test(input))
    return found(`a Unicode property written with its name "${input}"`, ' Write the value alone, as \\p{Greek}.');
  // RE2 reads "(?<" as the start of a group's name.
  if (error === 'invalid named capture' && /^\(\?<[=!]/.test(input)) return found(`a lookbehind "${input.slice(0, 4)}"`);
  if (error === 'invalid nested repetition operator' && /^[*+?}]\+$/.test(input.slice(-2))) return found(`a possessive quantifier "${input}"`);
  return null;
}
