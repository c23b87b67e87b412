// The baseline of P12: a bare node:http server that does what `serve --queue` must do to store a
// background run of bench/scenarios/fixtures/p11-drain/endpoints.xml's `one`, and nothing more:
// routes, parses and checks the declared parameter, seals the same record (parameters, system
// values, secret names) with AES-256-GCM bound to the job id, and adds the job with BullMQ's
// Queue.add and the service's job options before it answers an empty 200 with x-request-id. No log,
// no metrics.
//
//   node bench/baselines/p12-baseline.mjs --redis URL --queue NAME
import { createCipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { commandLine } from '../lib/cli.mjs';

const USAGE = `Usage: node bench/baselines/p12-baseline.mjs --redis URL --queue NAME

The baseline server of P12 (started by scenarios/p12-enqueue.mjs): GET /one?ref=… seals the run and
adds it to the queue with BullMQ's Queue.add, then answers an empty 200. Prints its URL once
listening.

  --redis URL   the Redis
  --queue NAME  the queue name
  -h, --help    this text
`;
const { values } = commandLine(USAGE, { redis: { type: 'string' }, queue: { type: 'string' } }, { required: ['redis', 'queue'] });
const key = randomBytes(32);
const keyId = createHash('sha256').update(key).digest()[0];
const endpointHash = createHash('sha256').update('one').digest('hex').slice(0, 8);
const fingerprint = createHash('sha256').update('one').digest('hex').slice(0, 32);
const options = { attempts: 6, backoff: { type: 'custom', delay: 30_000 }, removeOnComplete: { age: 3600, count: 1000 }, removeOnFail: { age: 1_209_600 } };

function seal(plain, aad) {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([keyId]), nonce, body, cipher.getAuthTag()]).toString('base64url');
}

const connection = new Redis(values.redis, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
connection.on('error', () => {});
const queue = new Queue(values.queue, { connection });
queue.on('error', () => {});

const server = createServer(async (req, res) => {
  const requestId = randomUUID();
  res.setHeader('x-request-id', requestId);
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  if ((q < 0 ? url : url.slice(0, q)) !== '/one') {
    res.statusCode = 404;
    return res.end();
  }
  const ref = new URLSearchParams(q < 0 ? '' : url.slice(q + 1)).get('ref') ?? '';
  const jobId = `${requestId}.${endpointHash}`;
  const system = {
    'request-id': requestId,
    endpoint: 'one',
    environment: '',
    'client-ip': req.socket.remoteAddress ?? '',
    'user-agent': req.headers['user-agent'] ?? '',
    'base-url': `http://${req.headers.host}`,
  };
  const data = {
    v: 1,
    endpoint: 'one',
    requestId,
    fingerprint,
    enqueuedAt: Date.now(),
    sealed: seal(JSON.stringify({ parameters: [['ref', ref]], system, secret: [] }), jobId),
  };
  try {
    await queue.add('one', data, { ...options, jobId });
    res.statusCode = 200;
  } catch {
    res.statusCode = 503;
  }
  res.setHeader('content-length', 0);
  res.end();
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
