// The Fastify 5 baseline of scenarios/p1-query.mjs: what a user would write by hand for P1's
// endpoint. GET /p1 with a and b declared in a querystring schema (Fastify's own way to check
// parameters: a 400 when one is missing), an empty 200, and x-request-id with a UUID on every
// answer (the request id Fastify generates, so with --logger the log lines carry it too, as serve's
// do). Prints its URL on stdout once listening.
//
// --logger turns on Fastify's own pino logger with its default request logging (a line when a
// request comes in, one when it is answered). It writes to this process's stderr, as serve
// writes its JSON log: p1-query.mjs points both at /dev/null, so neither pays for a disk or a
// reader the other does not. `file` is Fastify's documented option for a destination; it opens
// the same kind of pino stream as the default stdout one, which is kept free for the URL line.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { commandLine } from '../lib/cli.mjs';

const { values } = commandLine(
  `Usage: node bench/baselines/p1-fastify.mjs [--logger]

A baseline server of P1 (started by scenarios/p1-query.mjs): Fastify 5 answering GET /p1?a=…&b=…
with an empty 200 and x-request-id (400 when a or b is missing). Prints its URL once listening;
SIGTERM stops it.

  --logger    Fastify's pino logger on, with its default request logging, written to stderr
  -h, --help  this text
`,
  { logger: { type: 'boolean', default: false } },
);

const app = Fastify({
  logger: values.logger ? { file: '/dev/stderr' } : false,
  genReqId: () => randomUUID(),
});
// A hook rather than the handler, so that a 400 from the schema carries the header too.
app.addHook('onRequest', (request, reply, done) => {
  reply.header('x-request-id', request.id);
  done();
});
const schema = {
  querystring: { type: 'object', required: ['a', 'b'], properties: { a: { type: 'string' }, b: { type: 'string' } } },
};
app.get('/p1', { schema }, (request, reply) => {
  reply.send();
});

const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${url}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
