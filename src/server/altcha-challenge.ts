// `<base-path>/_altcha/<endpoint>`: the challenge a browser solves before it sends a form to an
// endpoint with <captcha provider="altcha">; the solution is checked with the request
// (runtime/guards.ts).

import type { LoadedApplication } from '../runtime/loaded.js';
import type { Guards } from '../runtime/guards.js';
import { expandTemplate } from '../template/expand.js';
import { SYSTEM_PARAMETERS, type SystemParameter } from '../template/types.js';
import type { TrackedResponse } from './http-server.js';
import { methodNotAllowed, truncatePath, writeBody, writeProblem } from './write-response.js';

/** A key is ${env:...} only: it reads no system value. */
const NO_SYSTEM_VALUES = Object.fromEntries(SYSTEM_PARAMETERS.map((name) => [name, ''])) as Record<SystemParameter, string>;

/** A challenge for the endpoint `name`; 404 when it has no ALTCHA CAPTCHA (or the process no guards). */
export async function answerAltchaChallenge(
  response: TrackedResponse,
  application: LoadedApplication,
  name: string,
  method: string,
  guards: Guards | null,
): Promise<void> {
  const captcha = application.application.endpointsByName.get(name)?.protections?.captcha;
  if (captcha?.provider !== 'altcha' || guards === null)
    return writeProblem(response, 404, `there is no ALTCHA challenge at ${truncatePath(response.path)}`, response.requestId);
  if (method !== 'GET') return methodNotAllowed(response, 'GET');
  const challenge = await guards.altchaChallenge(expandTemplate(captcha.secret, { parameters: new Map(), system: NO_SYSTEM_VALUES, env: application.env }));
  // Each challenge is good for one solution: a cache must not hand the same one out twice.
  response.setHeader('cache-control', 'no-store');
  writeBody(response, 200, 'application/json', challenge);
}
