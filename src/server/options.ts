// Settings of a serving process, already checked: the command line's job is to reject bad
// values with a usage error before any process starts.

import type { DeliverySettings } from '../deliveries/settings.js';
import type { QueueSettings } from '../queue/settings.js';
import type { TaskSettings } from '../tasks/settings.js';
import type { LogFormat } from './log.js';
import type { TrustProxy } from './client-ip.js';

export interface ServeSettings {
  /** The endpoints.xml as given. */
  readonly file: string;
  readonly port: number;
  readonly host: string;
  /** '' for the root, else '/a/b' (no trailing slash). */
  readonly basePath: string;
  /** null: no CORS; '*': any origin; else the allowed origins. */
  readonly cors: '*' | ReadonlySet<string> | null;
  readonly workers: number;
  readonly maxBodyBytes: number;
  /** --max-inflight-body-size: bytes of request bodies one process holds in memory at once. */
  readonly maxInflightBodyBytes: number;
  /** --upload-dir: where each process makes its folder of temporary upload files; null: the system's temporary folder. */
  readonly uploadDir: string | null;
  readonly requestTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
  readonly logFormat: LogFormat;
  readonly color: boolean;
  readonly watch: boolean;
  /** What the task options decided for every kind (--smtp-url, --allow-task-host, …), handed to the kinds as it is. */
  readonly tasks: TaskSettings;
  /** --queue: tasks="background" runs go to this durable queue; null: in-process. */
  readonly queue: QueueSettings | null;
  /** Export OpenTelemetry traces (--otel, or an OTLP endpoint in the environment). */
  readonly otel: boolean;
  /** --trust-proxy: whose X-Forwarded-For / Forwarded is believed; null: the socket's address is the client's. */
  readonly trustProxy: TrustProxy | null;
  /** --rate-limit-store: redis://…; null: in memory (one count per service through the primary with workers). */
  readonly rateLimitStore: string | null;
  /** --rate-limit-prefix: before every key in the store. */
  readonly rateLimitPrefix: string;
  /** --public-url: where clients reach the service; null: the request's Host says (docs/behaviour.md, "Origins"). */
  readonly publicUrl: PublicUrl | null;
  /** The delivery log (docs/deliveries.md); null with --deliveries none. */
  readonly deliveries: DeliverySettings | null;
  /** --admin-host and --admin-port: where the deliveries page is served; null with --admin-port none. */
  readonly admin: { readonly host: string; readonly port: number } | null;
}

/** serve --public-url, checked: an absolute http(s) URL without credentials, query or fragment. */
export interface PublicUrl {
  /** Scheme, host and port as a browser writes them in Origin (`https://forms.example`). */
  readonly origin: string;
  /** The URL without a trailing slash (`https://forms.example/signup`); ${base-url} is this and --base-path. */
  readonly base: string;
}

/** `http://HOST:PORT`, with an IPv6 host in brackets. */
export function originOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
