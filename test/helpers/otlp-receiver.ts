// A real OTLP/HTTP receiver on 127.0.0.1 for tracing tests: accepts POST /v1/traces in the JSON
// encoding (what @opentelemetry/exporter-trace-otlp-http sends) and keeps every span, flattened
// with its resource's attributes. Anything else is answered 415, so a change of encoding fails.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The OpenTelemetry variables a test's child process gets: whatever the machine has set, the
 * test decides whether and where spans go; spans are exported 50 ms after they end.
 */
export const OTEL_ENV: Readonly<Record<string, string | undefined>> = {
  OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
  OTEL_SDK_DISABLED: undefined,
  OTEL_TRACES_EXPORTER: undefined,
  OTEL_TRACES_SAMPLER: undefined,
  OTEL_SERVICE_NAME: undefined,
  OTEL_BSP_SCHEDULE_DELAY: '50',
};

export type AttributeValue = string | number | boolean;

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  /** OTLP's numbers: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly resource: Readonly<Record<string, AttributeValue>>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}

function valueOf(v: OtlpValue): AttributeValue {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  throw new Error(`unexpected OTLP attribute value ${JSON.stringify(v)}`);
}

function attributes(list: readonly OtlpKeyValue[] | undefined): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const { key, value } of list ?? []) out[key] = valueOf(value);
  return out;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Every request body as received, to search for text that must not be exported. */
  readonly bodies: string[] = [];
  private readonly waiters: { match: (spans: readonly ReceivedSpan[]) => boolean; resolve: () => void }[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    let receiver!: OtlpReceiver;
    const server = http.createServer((req, res) => void receiver.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new OtlpReceiver(server, (server.address() as AddressInfo).port);
    return receiver;
  }

  /** For OTEL_EXPORTER_OTLP_ENDPOINT: the exporter adds /v1/traces. */
  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Resolves once the spans received so far satisfy `match`. */
  waitFor(match: (spans: readonly ReceivedSpan[]) => boolean): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ match, resolve });
      this.check();
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private check(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.waiters[i]!.match(this.spans)) this.waiters.splice(i, 1)[0]!.resolve();
    }
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
      res.writeHead(415).end();
      return;
    }
    const text = Buffer.concat(chunks).toString('utf8');
    this.bodies.push(text);
    const body = JSON.parse(text) as {
      resourceSpans?: {
        resource?: { attributes?: OtlpKeyValue[] };
        scopeSpans?: {
          spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: OtlpKeyValue[]; status?: { code?: number } }[];
        }[];
      }[];
    };
    for (const rs of body.resourceSpans ?? []) {
      const resource = attributes(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            attributes: attributes(s.attributes),
            statusCode: s.status?.code ?? 0,
            resource,
          });
        }
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    this.check();
  }
}
