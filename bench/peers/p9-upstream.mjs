// The upstream of P9: answers every request with a small JSON body, and records when each
// request carrying a `probe` query value arrived (Date.now(), the clock the client reads too).
// GET /_probes returns them as {probe: arrivedAtMs}. Prints its URL once listening.
import { createServer } from 'node:http';
import { commandLine } from '../lib/cli.mjs';

const USAGE = `Usage: node bench/peers/p9-upstream.mjs

The upstream of P9: answers every request with a small JSON body and records the arrival time of
requests with a probe query value (GET /_probes lists them). Prints its URL once listening;
SIGTERM stops it.

  -h, --help  this text
`;
commandLine(USAGE, {});
// An id, for a task that reads one (P11's two-task job).
const BODY = '{"ok":true,"id":"42"}';
const probes = {};
let count = 0;

const server = createServer((req, res) => {
  const arrived = Date.now();
  req.resume();
  req.once('end', () => {
    const url = new URL(req.url, 'http://upstream');
    if (url.pathname === '/_probes') {
      const body = JSON.stringify({ count, probes });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    count++;
    const probe = url.searchParams.get('probe');
    if (probe) probes[probe] = arrived;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': BODY.length });
    res.end(BODY);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
