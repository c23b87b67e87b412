// P9: a tasks="background" endpoint with one HttpRequest task, in-process (the default) against
// serve --queue with --no-queue-consume and a separate `worker` running the tasks, in the same
// run, on the Redis of ENDPOINT_SERVICE_BENCH_REDIS_URL (default redis://127.0.0.1:6379).
// Targets: queued req/s >= 0.7x in-process; p99 delay from the answer to the task's request at
// the upstream <= 50 ms at that load (probes sent during the load, one every 20 ms).
//
//   node bench/scenarios/p9-queue.mjs [--quick] [--rounds N] [--duration S] [--connections C]
import { randomBytes } from 'node:crypto';
import {
  bin,
  check,
  emitResult,
  fixture,
  LOAD_CPU,
  measureServer,
  median,
  options,
  requireBuild,
  spread,
  startProcess,
  startScript,
  startService,
  warmup,
} from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/p9-queue.mjs [--quick] [--rounds N] [--duration S] [--connections C]

P9: a background endpoint with one HttpRequest task, in-process against serve --queue with a
separate worker, on Redis (ENDPOINT_SERVICE_BENCH_REDIS_URL, default redis://127.0.0.1:6379).
Targets: queued req/s >= 0.70x in-process; p99 delay from answer to upstream <= 50 ms.

  --quick          shorter run (2 rounds x 4 s instead of 4 x 8 s)
  --rounds N       rounds per variant
  --duration S     seconds of load per round
  --connections C  autocannon connections (default 10)
  -h, --help       this text
`;
const o = options(USAGE, { rounds: [4, 2], duration: [8, 4], connections: [10, 10] });
requireBuild();
const redisUrl = process.env.ENDPOINT_SERVICE_BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const app = fixture('p9-queue');
const queueName = `es-bench-p9-${randomBytes(3).toString('hex')}`;
const key = randomBytes(32).toString('base64');

let Queue;
let Redis;
try {
  ({ Queue } = await import('bullmq'));
  ({ Redis } = await import('ioredis'));
  const probe = new Redis(redisUrl, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  probe.on('error', () => {});
  await probe.ping();
  probe.disconnect();
} catch (error) {
  console.log(`P9 skipped: no Redis at ${redisUrl} (${error.message}); set ENDPOINT_SERVICE_BENCH_REDIS_URL`);
  emitResult('p9', [check('P9 skipped: no Redis', 'n/a', 'information', null)]);
  process.exit(0);
}

const upstream = await startScript('peers/p9-upstream.mjs', [], { cpu: LOAD_CPU });
const env = { ...process.env, UPSTREAM: upstream.url, ENDPOINT_SERVICE_QUEUE_KEY: key };
// Without the delivery log, which P16 measures: with --queue it would write every delivery into
// this shared Redis under the default namespace, and nothing here would remove them.
const NO_LOG = ['--deliveries', 'none'];
const inProcess = await startService(app, { env, extra: NO_LOG });
const queued = await startService(app, { env, extra: ['--queue', redisUrl, '--queue-name', queueName, '--no-queue-consume', ...NO_LOG] });
const worker = await startProcess(
  [
    process.execPath,
    bin,
    'worker',
    app,
    '--queue',
    redisUrl,
    '--queue-name',
    queueName,
    '--port',
    '0',
    '--concurrency',
    '64',
    '--log-format',
    'json',
    ...NO_LOG,
  ],
  {
    cpu: LOAD_CPU,
    env,
    ready: /^endpoint-service worker listening on (\S+)$/m,
  },
);
const variants = [
  { name: 'in-process', server: inProcess, samples: [], delays: [] },
  { name: '--queue + worker', server: queued, samples: [], delays: [] },
];

/** During a load test, one probe request every 20 ms: when its answer came, by probe id. */
async function probing(server, until) {
  const answered = {};
  let n = 0;
  while (!until.done) {
    const id = `${randomBytes(4).toString('hex')}-${n++}`;
    const response = await fetch(`${server.url}/p8?probe=${id}`);
    await response.arrayBuffer();
    answered[id] = Date.now();
    await new Promise((r) => setTimeout(r, 20));
  }
  return answered;
}

async function delaysOf(answered) {
  // The task may still be on its way: wait for the upstream to have seen every probe (bounded).
  for (let i = 0; i < 100; i++) {
    const { probes } = await (await fetch(`${upstream.url}/_probes`)).json();
    if (Object.keys(answered).every((id) => id in probes) || i === 99)
      return Object.entries(answered)
        .filter(([id]) => id in probes)
        .map(([id, at]) => probes[id] - at);
    await new Promise((r) => setTimeout(r, 100));
  }
  return [];
}

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

try {
  for (const v of variants) await warmup(v.server.url + '/p8', o.connections);
  for (let round = 0; round < o.rounds; round++) {
    for (const v of variants) {
      const until = { done: false };
      const probes = probing(v.server, until);
      v.samples.push(await measureServer(v.server, v.server.url + '/p8', { connections: o.connections, duration: o.duration }));
      until.done = true;
      v.delays.push(...(await delaysOf(await probes)));
    }
  }
} finally {
  await Promise.all([inProcess.stop(), queued.stop(), worker.stop()]);
  await upstream.stop();
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(queueName, { connection });
  await queue.obliterate({ force: true }).catch(() => {});
  await queue.close();
  connection.disconnect();
}

console.log(
  `P9 GET /p8 (tasks="background", one HttpRequest task): ${o.connections} connections, ${o.rounds} rounds x ${o.duration} s per variant, alternating; serve on core 0; autocannon, upstream and the worker on core 1`,
);
for (const v of variants) {
  const s = v.samples;
  console.log(
    `  ${v.name.padEnd(17)} req/s ${spread(s.map((x) => x.rps))}   p50 ${spread(
      s.map((x) => x.p50),
      1,
      ' ms',
    )}   p99 ${spread(
      s.map((x) => x.p99),
      1,
      ' ms',
    )}   ` +
      `serve CPU ${spread(
        s.map((x) => x.cpuUsPerReq),
        1,
      )} µs/req   answer→upstream p50 ${percentile(v.delays, 50)} ms p99 ${percentile(v.delays, 99)} ms (${v.delays.length} probes)`,
  );
}
const [local, durable] = variants;
const vsLocal = median(durable.samples.map((x) => x.rps)) / median(local.samples.map((x) => x.rps));
const p99 = percentile(durable.delays, 99);
console.log(`  ratios (of medians): queued/in-process req/s ${vsLocal.toFixed(2)}x`);
emitResult('p9', [
  check('P9 --queue req/s vs in-process background', `${vsLocal.toFixed(3)}x`, '>= 0.70x', vsLocal >= 0.7),
  check('P9 --queue answer→upstream delay p99', `${p99} ms (p50 ${percentile(durable.delays, 50)} ms)`, '<= 50 ms', p99 <= 50),
  check('P9 (info) in-process answer→upstream p99', `${percentile(local.delays, 99)} ms`, 'information', null),
]);
