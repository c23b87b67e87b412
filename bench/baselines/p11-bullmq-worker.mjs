// The baseline of P11: a hand-written BullMQ 6 worker whose processor does the HTTP work of the
// jobs `serve --queue` stores for bench/scenarios/fixtures/p11-drain/endpoints.xml, with got
// configured like the service's client (keep-alive agent, no got retries, no throw on HTTP errors)
// and the same requests: a form POST with an Idempotency-Key; for a job of the endpoint `two`, a
// second POST sending the id the first answer carries. It does not open the sealed request (it
// posts the endpoint's default value), nor checkpoint or log: the least a worker can do for the
// same calls.
//
//   node bench/baselines/p11-bullmq-worker.mjs --redis URL --queue NAME --upstream URL [--concurrency N]
import http from 'node:http';
import https from 'node:https';
import { Worker } from 'bullmq';
import got from 'got';
import { Redis } from 'ioredis';
import { commandLine, numberOption } from '../lib/cli.mjs';

const USAGE = `Usage: node bench/baselines/p11-bullmq-worker.mjs --redis URL --queue NAME --upstream URL [--concurrency N]

The baseline worker of P11 (started by scenarios/p11-drain.mjs): takes the queue's jobs and makes
their HTTP calls with got. Prints "ready" once its worker runs; SIGTERM closes it.

  --redis URL        the Redis
  --queue NAME       the queue name
  --upstream URL     where the calls go
  --concurrency N    jobs at once (default 64)
  -h, --help         this text
`;
const { values } = commandLine(
  USAGE,
  { redis: { type: 'string' }, queue: { type: 'string' }, upstream: { type: 'string' }, concurrency: { type: 'string' } },
  { required: ['redis', 'queue', 'upstream'] },
);
const concurrency = numberOption(USAGE, values, 'concurrency', 64);
const agentOptions = { keepAlive: true, timeout: 5_000 };
const client = got.extend({
  retry: { limit: 0 },
  throwHttpErrors: false,
  followRedirect: true,
  maxRedirects: 5,
  decompress: true,
  agent: { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) },
});
const upstream = values.upstream;

async function post(url, form, key) {
  const response = await client.post(url, { form, headers: { 'idempotency-key': key }, timeout: { request: 30_000 }, responseType: 'buffer' });
  if (response.statusCode < 200 || response.statusCode > 299) throw new Error(`upstream answered ${response.statusCode}`);
  // got 16 answers a Uint8Array, whose toString() lists the bytes as numbers: read as a Buffer.
  const body = response.body;
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

const connection = new Redis(values.redis, { maxRetriesPerRequest: null });
const worker = new Worker(
  values.queue,
  async (job) => {
    if (job.name === 'two') {
      const { id } = JSON.parse((await post(`${upstream}/task?ref=`, { ref: '' }, `${job.id}:create`)).toString('utf8'));
      await post(`${upstream}/task?item=${encodeURIComponent(id)}`, { item: id }, `${job.id}:follow`);
    } else {
      await post(`${upstream}/task?ref=`, { ref: '' }, `${job.id}:notify`);
    }
  },
  {
    connection,
    concurrency,
    // The jobs serve stores name the service's own backoff; without a strategy for it BullMQ
    // cannot fail or retry a job whose processor threw, and the job stalls instead of saying why.
    settings: { backoffStrategy: () => 1_000 },
  },
);
worker.on('error', () => {});
await worker.waitUntilReady();
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void worker.close().finally(() => {
    connection.disconnect();
    process.exit(0);
  });
});
