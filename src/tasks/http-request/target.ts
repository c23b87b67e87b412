// The URL checks an HttpRequest attempt makes before it connects (send.ts: the URL must parse,
// its scheme be http or https). Preparation makes them first, so a request value that makes the
// URL unusable refuses the request before its first task, instead of failing this one after the
// earlier tasks have run.

/** What is wrong with `url` as a predicate ("not a valid URL"); null when an attempt may be made. */
export function requestTargetProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a valid URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'one whose scheme is not http or https';
  return null;
}
