// The local upstream of P2 and P4: a node:http server answering every request with a small
// JSON body, optionally after a delay (--delay MS). Prints its URL once listening.
import { createServer } from 'node:http';
import { commandLine, numberOption } from '../lib/cli.mjs';

const USAGE = `Usage: node bench/peers/upstream.mjs [--delay MS]

The upstream of P2 and P4: answers every request with a small JSON body. Prints its URL once
listening; SIGTERM stops it.

  --delay MS  wait this long before each answer (default 0)
  -h, --help  this text
`;
const { values } = commandLine(USAGE, { delay: { type: 'string' } });
const delay = numberOption(USAGE, values, 'delay', 0);
const BODY = '{"id":"42","ok":true}';

const server = createServer((req, res) => {
  // Drain any request body before answering, as a real upstream would.
  req.resume();
  req.once('end', () => {
    const answer = () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': BODY.length });
      res.end(BODY);
    };
    if (delay > 0) setTimeout(answer, delay);
    else answer();
  });
});
// Keep-alive connections from the clients under test are kept open between requests.
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
