// The hand-written baselines of P2: a node:http handler that checks two query parameters,
// makes the same GET to the upstream as the endpoint's HttpRequest task, reads the whole
// answer, checks for 2xx and answers an empty 200 with x-request-id.
//   --client got    with got, configured like the service's client (no retries, no throw on
//                   HTTP errors, redirects followed, per-request timeout)
//   --client fetch  with Node's global fetch (undici inside; the undici package itself is
//                   not installed)
// Usage: node bench/baselines/p2-baseline.mjs --client got|fetch --upstream URL
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import got from 'got';
import { commandLine, usageError } from '../lib/cli.mjs';

const USAGE = `Usage: node bench/baselines/p2-baseline.mjs [--client got|fetch] --upstream URL

The baseline servers of P2 (started by scenarios/p2-http-task.mjs): GET /p2?a=…&b=… makes one GET to
the upstream with got or fetch and answers an empty 200. Prints its URL once listening.

  --client got|fetch  the HTTP client (default got)
  --upstream URL      the upstream to call (required)
  -h, --help          this text
`;
const { values } = commandLine(USAGE, { client: { type: 'string', default: 'got' }, upstream: { type: 'string' } }, { required: ['upstream'] });
if (values.client !== 'got' && values.client !== 'fetch') usageError(USAGE, `--client must be got or fetch (got "${values.client}")`);
const upstream = values.upstream;
const client = got.extend({ retry: { limit: 0 }, throwHttpErrors: false, followRedirect: true, maxRedirects: 5, decompress: true });

const call =
  values.client === 'fetch'
    ? async (url) => {
        const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
        await response.arrayBuffer();
        return response.status;
      }
    : async (url) => {
        const response = await client.get(url, { timeout: { request: 30_000 }, responseType: 'buffer' });
        return response.statusCode;
      };

const server = createServer(async (req, res) => {
  res.setHeader('x-request-id', randomUUID());
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  if ((q < 0 ? url : url.slice(0, q)) !== '/p2') {
    res.statusCode = 404;
    return res.end();
  }
  const params = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  const a = params.get('a');
  if (a === null || params.get('b') === null) {
    res.statusCode = 400;
    return res.end();
  }
  try {
    const status = await call(`${upstream}/item?a=${encodeURIComponent(a)}`);
    res.statusCode = status >= 200 && status < 300 ? 200 : 502;
  } catch {
    res.statusCode = 502;
  }
  res.setHeader('content-length', 0);
  res.end();
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
