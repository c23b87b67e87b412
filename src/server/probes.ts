// /_health, /_ready and /_metrics: what the service answers about itself, to probes and
// scrapers. Liveness and readiness differ only when a queue store is down (answerReady).

import type { Logger } from './log.js';
import type { ServiceMetrics } from './metrics.js';
import type { ServeSettings } from './options.js';
import type { TrackedResponse } from './http-server.js';
import { describeError } from '../errors.js';
import { writeBody, writeProblem } from './write-response.js';

/** The methods of every probe. Endpoints have no HEAD: it would run their tasks. */
export const PROBE_ALLOW = 'GET, HEAD';

const HEALTHY = '{"status":"ok"}';
const READY = '{"status":"ready"}';

/** What the probes read of the service's state (HttpServerState). */
export interface ProbedState {
  readonly shuttingDown: boolean;
  /** serve --queue: whether its store answers. */
  readonly queue?: { readonly up: boolean } | null;
}

/** Liveness: a store that is down does not make the instance unhealthy. */
export function answerHealth(response: TrackedResponse, state: ProbedState): void {
  if (state.shuttingDown) writeProblem(response, 503, 'the service is shutting down', response.requestId);
  else writeBody(response, 200, 'application/json', state.queue ? `{"status":"ok","queue":"${state.queue.up ? 'up' : 'unreachable'}"}` : HEALTHY);
}

/**
 * Readiness, apart from /_health's liveness: whether this instance can serve every endpoint
 * now. A store that is down makes background endpoints answer 503 (unless the fallback runs
 * them here), which a restart of this process would not mend: /_health stays 200, this is 503
 * so that a load balancer sends the traffic elsewhere.
 */
export function answerReady(response: TrackedResponse, state: ProbedState, settings: ServeSettings): void {
  if (state.shuttingDown) return writeProblem(response, 503, 'the service is shutting down', response.requestId);
  const queue = state.queue;
  if (queue === null || queue === undefined) return writeBody(response, 200, 'application/json', READY);
  if (!queue.up && settings.queue?.fallback !== 'in-process') {
    response.setHeader('retry-after', '5');
    return writeProblem(response, 503, 'the queue store is unreachable: background endpoints answer 503', response.requestId);
  }
  writeBody(response, 200, 'application/json', `{"status":"ready","queue":"${queue.up ? 'up' : 'unreachable'}"}`);
}

export async function answerMetrics(response: TrackedResponse, metrics: ServiceMetrics, logger: Logger): Promise<void> {
  try {
    const text = await metrics.render();
    writeBody(response, 200, metrics.contentType, text);
  } catch (error) {
    logger.log('error', 'metrics could not be collected', { error: describeError(error, { stack: true }) });
    writeProblem(response, 503, 'metrics could not be collected; try again', response.requestId);
  }
}
