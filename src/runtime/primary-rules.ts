// The parts of a primary action that are decided without I/O: which <success> applies, the
// redirect whitelist and download filenames (the compiler's rule, compiler/download-filename.ts).

import type { Endpoint, SuccessResponse } from '../compiler/ast.js';
import { evaluateCondition } from '../template/condition.js';
import type { ExpansionScope } from '../template/expand.js';

const EMPTY_SUCCESS: SuccessResponse = {
  condition: null,
  action: { kind: 'empty' },
  after: [],
  inputs: [],
  deferred: false,
  position: { file: '', line: 0, column: 0 },
};

/** The first <success> whose condition holds; an empty 200 when none does. */
export function selectSuccess(endpoint: Endpoint, scope: ExpansionScope): SuccessResponse {
  for (const success of endpoint.successes) {
    if (success.condition === null || evaluateCondition(success.condition, scope, endpoint.separator)) return success;
  }
  return EMPTY_SUCCESS;
}

/**
 * null when the URL may be redirected to. An entry without a path matches only when the next
 * character is `/`, `?`, `#` or the end, so `https://good.example.evil.com` does not pass.
 */
export function redirectRefusal(url: string, whitelist: readonly string[]): string | null {
  if (whitelist.length === 0) return null;
  for (const prefix of whitelist) {
    if (!url.startsWith(prefix)) continue;
    // A local-path entry ("/", "/app/") must not let through "//evil.com" or "/\evil.com":
    // browsers read both as a URL of another host (a scheme-relative URL).
    if (prefix.startsWith('/') && !prefix.startsWith('//') && /^[/\\][/\\]/.test(url)) continue;
    if (hasPath(prefix)) return null;
    const next = url.charAt(prefix.length);
    if (next === '' || next === '/' || next === '?' || next === '#') return null;
  }
  return 'the redirect target is not in the whitelist';
}

function hasPath(prefix: string): boolean {
  const scheme = prefix.indexOf('://');
  const rest = scheme >= 0 ? prefix.slice(scheme + 3) : prefix;
  return /[/?#]/.test(rest);
}
