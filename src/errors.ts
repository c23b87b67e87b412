// The one way to turn any thrown value into text for a log line. A Node system error's code
// (ECONNREFUSED, EPIPE) is added when its message does not already say it. Stacks only for the
// unexpected (an uncaught exception, a bug): task and request logs are read by people at 2 am.

export function describeError(error: unknown, options: { readonly stack?: boolean } = {}): string {
  if (!(error instanceof Error)) return String(error);
  if (options.stack === true && error.stack !== undefined) return error.stack;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}
