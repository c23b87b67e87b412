// What the primary (--workers N) and its workers tell each other. Kept apart from the serving
// code so that the command line can name them without loading the HTTP server.

/** Set in the environment of the one worker that reports the start-up compile for all. */
export const REPORTER_ENV = 'ENDPOINT_SERVICE_REPORTING_WORKER';

/** From the primary to a worker. `probe`: answer with `alive`, from the event loop. */
export type ControlMessage =
  { readonly type: 'endpoint-service:shutdown' } | { readonly type: 'endpoint-service:reload' } | { readonly type: 'endpoint-service:probe' };

/** From a worker to the primary: its start-up compile failed (the reporter has printed why), or the answer to a probe. */
export type WorkerMessage =
  | {
      readonly type: 'endpoint-service:not-compiled';
      /** 1: the configuration has errors; 2: it could not be read. */
      readonly exitCode: 1 | 2;
    }
  | { readonly type: 'endpoint-service:alive' };
