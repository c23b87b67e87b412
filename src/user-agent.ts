// The User-Agent of every request the service makes itself (HttpRequest tasks, <response-from-url>,
// CAPTCHA verification): the product and its version, so an API's log says who called, instead
// of the HTTP client library's own name. A task that sets its own User-Agent header sends that.

import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string };

/** `endpoint-service/<version>`. */
export const USER_AGENT = `${pkg.name}/${pkg.version}`;
