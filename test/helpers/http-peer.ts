// A real HTTP server on 127.0.0.1 for task tests: records every request with the time it
// arrived and the time its answer was fully written, and answers from a script per path.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface RecordedRequest {
  readonly method: string;
  /** Path and query as received. */
  readonly url: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** The body's bytes as received (body is their UTF-8 text). */
  readonly bytes: Buffer;
  /** performance.now() when the request line arrived. */
  readonly startedAt: number;
  /** performance.now() when the answer was fully written; null while in progress or when the client went away. */
  endedAt: number | null;
}

export interface Answer {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
  /** A JSON body with content-type application/json. */
  readonly json?: unknown;
  /** Waited for before answering (e.g. until other requests have arrived). */
  readonly hold?: () => Promise<void>;
  /** Writes this many bytes in 64 KiB chunks, without content-length, instead of body. */
  readonly streamBytes?: number;
  /** Accept the request, never answer. */
  readonly never?: boolean;
  /** Reset the connection (TCP RST) instead of answering: the client sees ECONNRESET. */
  readonly reset?: boolean;
}

export type AnswerFn = (request: RecordedRequest) => Answer | Promise<Answer>;

export class HttpPeer {
  readonly requests: RecordedRequest[] = [];
  /** TCP connections accepted so far: a request refused before connecting leaves it unchanged. */
  connections = 0;
  private readonly routes = new Map<string, { answers: (Answer | AnswerFn)[]; next: number }>();
  private readonly waiters: { count: number; path: string | null; resolve: () => void }[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
    readonly host: string,
  ) {}

  /** Listens on `host` (any loopback address: 127.0.0.2 too, or ::1). */
  static async start(host = '127.0.0.1'): Promise<HttpPeer> {
    let peer!: HttpPeer;
    const server = http.createServer((req, res) => void peer.handle(req, res));
    server.on('connection', () => peer.connections++);
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    peer = new HttpPeer(server, (server.address() as AddressInfo).port, host);
    return peer;
  }

  get origin(): string {
    return `http://${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}`;
  }

  url(path: string): string {
    return this.origin + path;
  }

  /** Answers in sequence; the last one repeats. */
  route(path: string, ...answers: (Answer | AnswerFn)[]): this {
    this.routes.set(path, { answers, next: 0 });
    return this;
  }

  requestsTo(path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** Resolves once `count` requests (to `path`, or any) have arrived. */
  waitForRequests(count: number, path: string | null = null): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ count, path, resolve });
      this.checkWaiters();
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private checkWaiters(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      const n = w.path === null ? this.requests.length : this.requestsTo(w.path).length;
      if (n >= w.count) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const startedAt = performance.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const parsed = new URL(req.url ?? '/', 'http://peer');
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      path: parsed.pathname,
      query: parsed.searchParams,
      headers: req.headers,
      bytes: Buffer.concat(chunks),
      get body() {
        return this.bytes.toString('utf8');
      },
      startedAt,
      endedAt: null,
    };
    this.requests.push(recorded);
    this.checkWaiters();
    res.on('finish', () => (recorded.endedAt = performance.now()));

    const route = this.routes.get(recorded.path);
    let answer: Answer;
    if (!route || route.answers.length === 0) {
      answer = { status: 404, body: 'no route' };
    } else {
      const scripted = route.answers[Math.min(route.next, route.answers.length - 1)]!;
      route.next++;
      answer = typeof scripted === 'function' ? await scripted(recorded) : scripted;
    }
    if (answer.hold) await answer.hold();
    if (answer.never) return;
    if (answer.reset) {
      req.socket.resetAndDestroy();
      return;
    }

    const headers: Record<string, string> = { ...(answer.headers ?? {}) };
    if (answer.streamBytes !== undefined) {
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/octet-stream', ...headers });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let left = answer.streamBytes;
      const pump = () => {
        while (left > 0) {
          const n = Math.min(left, chunk.length);
          left -= n;
          if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('close', () => (left = 0));
      pump();
      return;
    }
    let body: string | Buffer = answer.body ?? '';
    if (answer.json !== undefined) {
      body = JSON.stringify(answer.json);
      headers['content-type'] ??= 'application/json';
    }
    res.writeHead(answer.status ?? 200, headers);
    res.end(body);
  }
}
