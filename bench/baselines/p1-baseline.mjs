// The bare node:http server of scenarios/p1-query.mjs: route, two query parameters, empty 200 with
// x-request-id. Prints its URL on stdout once listening.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { commandLine } from '../lib/cli.mjs';

commandLine(`Usage: node bench/baselines/p1-baseline.mjs

The baseline server of P1 (started by scenarios/p1-query.mjs): GET /p1?a=…&b=… answers an empty 200
with x-request-id. Prints its URL once listening; SIGTERM stops it.

  -h, --help  this text
`);

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  res.setHeader('x-request-id', randomUUID());
  if (path !== '/p1' || (req.method !== 'GET' && req.method !== 'POST')) {
    res.statusCode = 404;
    res.end();
    return;
  }
  const params = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  if (params.get('a') === null || params.get('b') === null) res.statusCode = 400;
  res.setHeader('content-length', 0);
  res.end();
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
