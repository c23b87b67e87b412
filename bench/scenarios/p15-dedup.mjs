// P15: <deduplicate> on Redis against the same endpoint without it, in the same run and the same
// serve process (--rate-limit-store on the Redis of ENDPOINT_SERVICE_BENCH_REDIS_URL, default
// redis://127.0.0.1:6379, under a key prefix of its own, removed afterwards). Every request
// carries a new delivery id (autocannon -I), so each is claimed and then remembered: two Redis
// round trips. For information, a third variant repeats one delivery: every request a replay.
// Two pairs: an endpoint that only answers (the worst case: the two round trips are all the work
// there is) and one with an HttpRequest task to a local upstream (peers/upstream.mjs, on the load
// core). Target: req/s with deduplication >= 0.70x without, at 32 connections.
//
//   node bench/scenarios/p15-dedup.mjs [--quick] [--rounds N] [--duration S] [--connections C]
import { randomBytes } from 'node:crypto';
import {
  check,
  emitResult,
  fixture,
  loadTest,
  LOAD_CPU,
  measureServer,
  median,
  options,
  requireBuild,
  startScript,
  startService,
  variantLine,
} from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/p15-dedup.mjs [--quick] [--rounds N] [--duration S] [--connections C]

P15: an endpoint with <deduplicate> on Redis (a new delivery id per request) against the same
endpoint without it, alternately, in one serve process. Target: req/s >= 0.70x at 32 connections.
Needs Redis (ENDPOINT_SERVICE_BENCH_REDIS_URL, default redis://127.0.0.1:6379).

  --quick          shorter run (3 rounds x 4 s instead of 5 x 8 s)
  --rounds N       rounds per variant
  --duration S     seconds of load per round
  --connections C  autocannon connections (default 32)
  -h, --help       this text
`;
const o = options(USAGE, { rounds: [5, 3], duration: [8, 4], connections: [32, 32] });
requireBuild();
const redisUrl = process.env.ENDPOINT_SERVICE_BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const prefix = `es-bench-p15-${randomBytes(3).toString('hex')}:`;

let Redis;
try {
  ({ Redis } = await import('ioredis'));
  const probe = new Redis(redisUrl, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  probe.on('error', () => {});
  await probe.ping();
  probe.disconnect();
} catch (error) {
  console.log(`P15 skipped: no Redis at ${redisUrl} (${error.message}); set ENDPOINT_SERVICE_BENCH_REDIS_URL`);
  emitResult('p15', [check('P15 skipped: no Redis', 'n/a', 'information', null)]);
  process.exit(0);
}

const upstream = await startScript('peers/upstream.mjs', [], { cpu: LOAD_CPU });
const server = await startService(fixture('p15-dedup'), {
  env: { ...process.env, UPSTREAM: upstream.url },
  extra: ['--rate-limit-store', redisUrl, '--rate-limit-prefix', prefix],
});
const variants = [
  { name: 'without', url: `${server.url}/plain?d=[<id>]`, samples: [] },
  { name: '<deduplicate>', url: `${server.url}/dedup?d=[<id>]`, samples: [] },
  { name: 'replays (info)', url: `${server.url}/dedup?d=one-delivery`, samples: [] },
  { name: '1 task, without', url: `${server.url}/plain-task?d=[<id>]`, samples: [] },
  { name: '1 task, dedup', url: `${server.url}/dedup-task?d=[<id>]`, samples: [] },
];

try {
  // The repeated delivery is remembered before the load: every copy is then a replay (no 409).
  await (await fetch(variants[2].url)).arrayBuffer();
  for (const v of variants) await loadTest(v.url, { connections: o.connections, duration: 2, idReplacement: true });
  for (let round = 0; round < o.rounds; round++) {
    for (const v of variants) v.samples.push(await measureServer(server, v.url, { connections: o.connections, duration: o.duration, idReplacement: true }));
  }
} finally {
  await Promise.all([server.stop(), upstream.stop()]);
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  redis.disconnect();
}

console.log(
  `P15 GET with one parameter and a body answer, with and without <deduplicate> on Redis: ${o.connections} connections, ${o.rounds} rounds x ${o.duration} s per variant, alternating; serve on core 0, autocannon and Redis elsewhere`,
);
for (const v of variants) console.log(variantLine(v.name, 15, v.samples));
const [plain, dedup, replays, plainTask, dedupTask] = variants;
const rps = (v) => median(v.samples.map((x) => x.rps));
const ratio = rps(dedup) / rps(plain);
const replayRatio = rps(replays) / rps(plain);
const taskRatio = rps(dedupTask) / rps(plainTask);
console.log(
  `  ratios (of medians): with/without req/s ${ratio.toFixed(2)}x (answer only), ${taskRatio.toFixed(2)}x (one HttpRequest task); replays/without ${replayRatio.toFixed(2)}x`,
);
emitResult('p15', [
  check('P15 <deduplicate> on Redis vs none req/s, one HttpRequest task', `${taskRatio.toFixed(3)}x`, '>= 0.70x', taskRatio >= 0.7),
  check('P15 <deduplicate> on Redis vs none req/s, answer only (worst case)', `${ratio.toFixed(3)}x`, '>= 0.70x', ratio >= 0.7),
  check('P15 (info) replays vs none req/s', `${replayRatio.toFixed(3)}x`, 'information', null),
]);
