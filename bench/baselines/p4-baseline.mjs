// A hand-written reference for P4 (not the target, which is the ideal 3 x 50 ms): a node:http
// handler making the same six calls with got, the chain in sequence passing $.id along and the
// three independent calls concurrently with it; empty 200 when all succeeded.
// Usage: node bench/baselines/p4-baseline.mjs --upstream URL
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import got from 'got';
import { commandLine } from '../lib/cli.mjs';

const { values } = commandLine(
  `Usage: node bench/baselines/p4-baseline.mjs --upstream URL

The reference server of P4 (started by scenarios/p4-chain.mjs): GET /p4 makes P4's six upstream
calls with got, three in a chain and three concurrently, and answers an empty 200. Prints its URL
once listening.

  --upstream URL  the upstream to call (required)
  -h, --help      this text
`,
  { upstream: { type: 'string' } },
  { required: ['upstream'] },
);
const up = values.upstream;
const client = got.extend({ retry: { limit: 0 }, throwHttpErrors: true, timeout: { request: 30_000 } });

async function chain() {
  const v1 = (await client.get(`${up}/c1`).json()).id;
  const v2 = (await client.get(`${up}/c2?v=${encodeURIComponent(v1)}`).json()).id;
  await client.get(`${up}/c3?v=${encodeURIComponent(v2)}`).buffer();
}

const server = createServer(async (req, res) => {
  res.setHeader('x-request-id', randomUUID());
  try {
    await Promise.all([chain(), client.get(`${up}/i1`).buffer(), client.get(`${up}/i2`).buffer(), client.get(`${up}/i3`).buffer()]);
    res.statusCode = 200;
  } catch {
    res.statusCode = 502;
  }
  res.setHeader('content-length', 0);
  res.end();
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
