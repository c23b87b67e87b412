// A store's URL as it may be shown: in the ready line, in errors and in logs.

/** `url` without its password (in the authority or as a `password` query parameter); the rest as given. */
export function withoutPassword(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL the WHATWG parser takes; still cut whatever sits between "user:" and "@".
    return url.replace(/(\/\/[^/@:]*):[^/@]*@/, '$1@');
  }
  if (parsed.password === '' && !parsed.searchParams.has('password')) return url;
  parsed.password = '';
  parsed.searchParams.delete('password');
  return parsed.toString();
}
