// BullMQ's PostgreSQL backend, made to recover from a failed start. BullMQ 6.7 keeps the
// promise of a backend's first start (connecting, migrating the schema) and hands the same
// rejected promise to every later operation. So a process that met the store down while it
// started never used it again: serve answered 503 after the store was back, a worker ran no job;
// and a Worker's loop, which takes such an instant failure for a bug of its own and asks again
// at once, held the CPU so that no timer, health check or signal handler ran. Here a failed
// start is forgotten, after a pause, and the next operation starts again; and a connection lost
// under BullMQ's feet is not an uncaught exception. This reaches into BullMQ's internals: bullmq
// is pinned, and test/queue/store-down.e2e.test.ts and test/queue/postgres-backend.e2e.test.ts
// hold this.

/** The start BullMQ memoizes, on the backend and on its connection. */
interface MemoizedStart {
  waitUntilReady(): Promise<void>;
  readyPromise?: Promise<void> | undefined;
}

interface ErrorEmitter {
  on(event: 'error', listener: (error: Error) => void): unknown;
}

interface PostgresBackend extends MemoizedStart {
  readonly connection: MemoizedStart & { readonly pool?: { on(event: 'connect', listener: (client: ErrorEmitter) => void): unknown } };
}

export type PostgresBackendFactory = (name: string, opts: unknown, factoryOptions?: unknown) => PostgresBackend;

/** How long a failed start waits before it fails its callers: the most a Worker's loop can spin. */
const START_RETRY_PAUSE_MS = 1_000;

export function restartablePostgresBackend(factory: PostgresBackendFactory): PostgresBackendFactory {
  return (name, opts, factoryOptions) => {
    const backend = factory(name, opts, factoryOptions);
    // A pooled client that loses its connection while BullMQ holds it (its start, a query)
    // emits an 'error' nobody listens to: an uncaught exception in every outage. The operation
    // fails with the same error, and the pool drops the client; the event itself says nothing.
    backend.connection.pool?.on('connect', (client) => client.on('error', () => {}));
    forgetFailedStart(backend.connection, START_RETRY_PAUSE_MS);
    forgetFailedStart(backend, 0);
    return backend;
  };
}

function forgetFailedStart(target: MemoizedStart, pauseMs: number): void {
  if (typeof target.waitUntilReady !== 'function') return;
  const start = target.waitUntilReady.bind(target);
  target.waitUntilReady = async () => {
    const attempt = start();
    // BullMQ sets the memo before its first await, so this is the start being awaited.
    const memo = target.readyPromise;
    try {
      await attempt;
    } catch (error) {
      // Forget this start only (a caller may already have begun the next one); a BullMQ without
      // the memo has nothing to forget.
      if (memo !== undefined && target.readyPromise === memo) target.readyPromise = undefined;
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      throw error;
    }
  };
}
