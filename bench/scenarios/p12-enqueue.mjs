// P12: requests/s of `serve --queue --no-queue-consume` on a background endpoint with one
// HttpRequest task (bench/scenarios/fixtures/p11-drain/endpoints.xml's `one`), against a bare
// node:http server that parses the same parameter and stores a sealed run of the same size with
// BullMQ's Queue.add (baselines/p12-baseline.mjs), same Redis, same run, alternating. Redis: a
// redis-server of its own on a free port, stopped at the end. Target: serve req/s >= 0.9x the
// baseline's, with --deliveries none (the baseline records nothing); with the log on, for
// information.
//
//   node bench/scenarios/p12-enqueue.mjs [--quick] [--rounds N] [--duration S] [--connections C]
import { randomBytes } from 'node:crypto';
import {
  check,
  cpuSeconds,
  emitResult,
  fixture,
  measureServer,
  median,
  options,
  planRow,
  requireBuild,
  spread,
  startScript,
  startService,
  warmup,
  variantLine,
} from '../lib/common.mjs';
import { startRedis } from '../lib/redis-server.mjs';

const USAGE = `Usage: node bench/scenarios/p12-enqueue.mjs [--quick] [--rounds N] [--duration S] [--connections C]

P12: serve --queue --no-queue-consume answering a background endpoint (each request stored as a
sealed job) against a bare node:http server calling BullMQ's Queue.add, same run, own
redis-server. Target: serve req/s >= 0.90x the baseline's.

  --quick          shorter run (3 rounds x 4 s instead of 5 x 8 s)
  --rounds N       rounds per server
  --duration S     seconds of load per round
  --connections C  autocannon connections (default 10)
  -h, --help       this text
`;
const o = options(USAGE, { rounds: [5, 3], duration: [8, 4], connections: [10, 10] });
requireBuild();
const redis = await startRedis();
if (redis === null) {
  console.log('P12 skipped: redis-server is not on PATH');
  emitResult('p12', [check('P12 skipped: no redis-server', 'n/a', 'information', null)]);
  process.exit(0);
}
const app = fixture('p11-drain');
const suffix = randomBytes(3).toString('hex');
const env = { ...process.env, UPSTREAM: 'http://127.0.0.1:9', ENDPOINT_SERVICE_QUEUE_KEY: randomBytes(32).toString('base64') };
const servers = [];
/** measureServer, plus the CPU Redis spent per stored job meanwhile. */
async function measureWithRedis(server, url) {
  const redis0 = cpuSeconds(redis.pid);
  const r = await measureServer(server, url, { connections: o.connections, duration: o.duration });
  return { ...r, redisUsPerReq: ((cpuSeconds(redis.pid) - redis0) * 1e6) / r.total };
}
try {
  // The baseline keeps no record of a request: serve is measured without its delivery log (which
  // --queue would otherwise write to the same Redis), and with it as a third variant, for information.
  const queue = ['--queue', redis.url, '--queue-name', `es-bench-p12-service-${suffix}`, '--no-queue-consume'];
  servers.push({ name: 'serve --queue', server: await startService(app, { env, extra: [...queue, '--deliveries', 'none'] }), samples: [] });
  servers.push({
    name: 'node:http + Queue.add',
    server: await startScript('baselines/p12-baseline.mjs', ['--redis', redis.url, '--queue', `es-bench-p12-bullmq-${suffix}`]),
    samples: [],
  });
  servers.push({ name: '+ delivery log', server: await startService(app, { env, extra: queue }), samples: [] });
  const url = (v) => `${v.server.url}/one?ref=${'r'.repeat(16)}`;
  for (const v of servers) await warmup(url(v), o.connections);
  for (let round = 0; round < o.rounds; round++)
    for (const v of round % 2 === 0 ? servers : [...servers].reverse()) v.samples.push(await measureWithRedis(v.server, url(v)));
} finally {
  for (const v of servers) await v.server.stop();
  await redis.stop();
}

console.log(
  `P12 enqueue GET /one (tasks="background", one HttpRequest task): ${o.connections} connections, ${o.rounds} rounds x ${o.duration} s per server, alternating; server on core 0; autocannon and Redis on core 1`,
);
for (const v of servers)
  console.log(
    variantLine(v.name, 22, v.samples) +
      `   Redis CPU ${spread(
        v.samples.map((x) => x.redisUsPerReq),
        1,
      )} µs/req`,
  );
const [service, baseline, withLog] = servers;
const logRatio = median(withLog.samples.map((x) => x.rps)) / median(service.samples.map((x) => x.rps));
const rps = median(service.samples.map((x) => x.rps)) / median(baseline.samples.map((x) => x.rps));
const cpu = median(service.samples.map((x) => x.cpuUsPerReq)) / median(baseline.samples.map((x) => x.cpuUsPerReq));
console.log(
  `  ratios (of medians): req/s ${rps.toFixed(2)}x, server CPU per request ${cpu.toFixed(2)}x; with/without the delivery log req/s ${logRatio.toFixed(2)}x`,
);
emitResult(
  'p12',
  [
    check('P12 enqueue req/s vs node:http + Queue.add', `${rps.toFixed(3)}x`, '>= 0.90x', rps >= 0.9),
    check('P12 (info) enqueue CPU per request vs baseline', `${cpu.toFixed(2)}x`, 'information', null),
    check('P12 (info) serve with its delivery log (the default) vs without', `${logRatio.toFixed(2)}x`, 'information', null),
  ],
  {
    plan: [
      planRow(
        'one serve process (--workers 1): background endpoint with --queue (stored, not run)',
        `${median(service.samples.map((x) => x.rps)).toFixed(0)} req/s (${rps.toFixed(2)}x)`,
        `node:http + Queue.add ${median(baseline.samples.map((x) => x.rps)).toFixed(0)} req/s`,
      ),
    ],
  },
);
