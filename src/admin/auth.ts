// Who may see the deliveries page: whoever holds the admin token, given once in the login URL
// (`?token=`, which sets an HttpOnly, SameSite=Strict cookie and is then dropped from the
// address) or as `Authorization: Bearer` by a script. Actions are POSTs that carry a CSRF token
// derived from the admin token and come from the page's own origin.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const COOKIE = 'endpoint_service_admin';
export const TOKEN_ENV = 'ENDPOINT_SERVICE_ADMIN_TOKEN';

/** The token of this deployment: the environment's, else one made now (and put in the environment, so --workers processes share it). */
export function adminToken(env: NodeJS.ProcessEnv): string {
  const given = env[TOKEN_ENV];
  if (given !== undefined && given.trim() !== '') return given.trim();
  const made = randomBytes(24).toString('base64url');
  env[TOKEN_ENV] = made;
  return made;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class AdminAuth {
  readonly csrf: string;

  constructor(private readonly token: string) {
    this.csrf = createHmac('sha256', token).update('endpoint-service admin csrf').digest('base64url');
  }

  /** From the cookie or the Authorization header. */
  allows(request: IncomingMessage): boolean {
    const authorization = request.headers.authorization;
    if (authorization !== undefined && /^Bearer\s+/i.test(authorization) && same(authorization.replace(/^Bearer\s+/i, '').trim(), this.token)) return true;
    const cookie = cookieValue(request.headers.cookie, COOKIE);
    return cookie !== null && same(cookie, this.token);
  }

  /** The login URL's token, when it is this deployment's. */
  loginToken(given: string | null): boolean {
    return given !== null && same(given, this.token);
  }

  /** A POST's CSRF token and origin: the page's own, or refused. */
  actionAllowed(request: IncomingMessage, form: URLSearchParams, origin: string): boolean {
    const sent = request.headers.origin;
    if (sent !== undefined && sent !== origin) return false;
    const fetchSite = request.headers['sec-fetch-site'];
    if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') return false;
    const csrf = form.get('csrf');
    return csrf !== null && same(csrf, this.csrf);
  }

  cookie(): string {
    return `${COOKIE}=${this.token}; HttpOnly; SameSite=Strict; Path=/`;
  }
}

function cookieValue(header: string | undefined, name: string): string | null {
  if (header === undefined) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}
