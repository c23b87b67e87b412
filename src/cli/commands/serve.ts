// `endpoint-service serve`'s command line: its argument, options, their parsers and the defaults
// the help shows. The compiler and the server are loaded only when it runs (docs/architecture.md,
// "Where other changes go").
import { Option, type Command } from 'commander';
import type { Returning } from '../action.js';
import { corsOrigins, count, duration, oneOf, portNumber, publicUrl, redisUrl, repeated, size, trustProxy } from '../option-parsers.js';
import { addOtelOption } from '../otel-options.js';
import { addServeQueueOptions } from '../queue-options.js';
import { addAdminOptions, addDeliveryRecordingOptions } from '../deliveries-options.js';
import type { ServeFlags } from '../serve.js';
import { DEFAULT_MAX_BODY_SIZE, DEFAULT_MAX_INFLIGHT_BODY_SIZE, DEFAULT_REQUEST_TIMEOUT, DEFAULT_SHUTDOWN_TIMEOUT } from '../serve-defaults.js';
import type { LogFormat } from '../../server/log.js';

export function registerServe(program: Command, returning: Returning): void {
  const serve = program
    .command('serve')
    .description('serve the application over HTTP')
    .argument('<file>', 'the endpoints.xml')
    .option('--port <n>', 'port to listen on, 0 for any free port (default: $PORT, else 8080)', portNumber)
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--base-path <path>', 'path prefix of every endpoint', '/')
    .option('--cors <origins>', 'allowed CORS origins, comma-separated, or *', corsOrigins)
    .option('--workers <n>', 'worker processes (default: available cores)', count('a number of worker processes', 1024))
    .option('--smtp-url <url>', 'SMTP connection for Email tasks (default: $ENDPOINT_SERVICE_SMTP_URL, else email-sending-configuration.xml)')
    .addOption(
      new Option('--max-body-size <size>', 'largest request body accepted: bytes, or with a unit such as 512k or 10MiB')
        .argParser(size)
        .default(size(DEFAULT_MAX_BODY_SIZE), DEFAULT_MAX_BODY_SIZE),
    )
    .addOption(
      new Option(
        '--max-inflight-body-size <size>',
        // Shown by hand: the value is only known with --max-body-size, and commander shows no default it does not hold.
        `most bytes of request bodies one process holds in memory at once; a body counts what has arrived, one client address at most a quarter of it (at least --max-body-size); a body that does not fit waits briefly, then gets a 503 with Retry-After; at least --max-body-size, which is taken when larger (default: ${DEFAULT_MAX_INFLIGHT_BODY_SIZE})`,
      ).argParser(size),
    )
    .option(
      '--upload-dir <folder>',
      'an existing folder for temporary upload files; each process makes its own private folder in it (default: the system temporary folder)',
    )
    .addOption(
      new Option('--request-timeout <duration>', 'longest time to answer a request, with a unit such as 500ms, 10s or 2m')
        .argParser(duration)
        .default(duration(DEFAULT_REQUEST_TIMEOUT), DEFAULT_REQUEST_TIMEOUT),
    )
    .addOption(
      new Option('--shutdown-timeout <duration>', 'longest wait for requests and tasks on SIGTERM or SIGINT, with a unit')
        .argParser(duration)
        .default(duration(DEFAULT_SHUTDOWN_TIMEOUT), DEFAULT_SHUTDOWN_TIMEOUT),
    )
    .option('--log-format <format>', 'pretty or json (default: pretty on a terminal, else json)', oneOf<LogFormat>('pretty', 'json'))
    .option('--watch', 'recompile when the application directory changes')
    .addOption(
      new Option(
        '--allow-task-host <hosts>',
        'only let HttpRequest tasks and response-from-url call these hosts (comma-separated, repeatable; *.example.com for subdomains; addresses and CIDR ranges such as 10.1.0.0/16); a request to any other host fails before connecting, redirects included',
      )
        .argParser(repeated)
        .default([] as string[], 'any host'),
    )
    .option(
      '--deny-private-addresses',
      'tasks and response-from-url connect to no loopback, private, link-local (169.254.169.254) or unspecified address, checked after DNS resolution and on every redirect; an --allow-task-host address or range lets one through',
    )
    .option(
      '--trust-proxy <hops|addresses>',
      'take the client address from X-Forwarded-For (else Forwarded) as far as these proxies are trusted: a number of hops (1 behind one load balancer), or comma-separated addresses and CIDR ranges (loopback, uniquelocal too); default: the socket address',
      trustProxy,
    )
    .option(
      '--rate-limit-store <url>',
      'count <rate-limit>s in Redis (redis://host:6379 or rediss://), one count for every instance using it; default: in memory, one count for all --workers',
      redisUrl,
    )
    .option(
      '--public-url <url>',
      "the URL clients reach the service at (https://forms.example): ${base-url} is this and --base-path, and with --cors only pages of this origin count as the service's own; default: the request's Host header, over http",
      publicUrl,
    )
    .option('--rate-limit-prefix <prefix>', 'put before every rate limit key in the store, so services sharing one Redis keep apart', 'endpoint-service:')
    .option('--no-idempotency-key', 'do not add an Idempotency-Key header to POST and PATCH HttpRequest tasks (one written in the task is still sent)');
  addOtelOption(serve);
  addDeliveryRecordingOptions(serve);
  addAdminOptions(serve);
  addServeQueueOptions(serve).action(
    returning(async (file: string, flags: ServeFlags, command: Command) => {
      const { runServe } = await import('../serve.js');
      return runServe(file, flags, command);
    }),
  );
}
