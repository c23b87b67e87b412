// An OTLP/HTTP receiver that accepts every export and keeps nothing: where P1 --otel sends the
// spans of the traced service. Prints its URL (for OTEL_EXPORTER_OTLP_ENDPOINT) once listening.
import { createServer } from 'node:http';
import { commandLine } from '../lib/cli.mjs';

const USAGE = `Usage: node bench/peers/otlp-sink.mjs

The OTLP/HTTP receiver of P1 --otel: answers every POST /v1/traces with 200 and drops it.
Prints its URL once listening, then on SIGTERM the number of exports and bytes received.

  -h, --help  this text
`;
commandLine(USAGE, {});
let exports = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on('data', (chunk) => (bytes += chunk.length));
  req.once('end', () => {
    exports++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
});
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => {
  process.stderr.write(`otlp-sink: ${exports} exports, ${bytes} bytes\n`);
  process.exit(0);
});
