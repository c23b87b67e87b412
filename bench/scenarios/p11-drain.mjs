// P11: how fast one `endpoint-service worker` drains queued background jobs, against a
// hand-written BullMQ 6 worker doing the same HTTP calls with got
// (baselines/p11-bullmq-worker.mjs), same concurrency, same Redis, same upstream, in the same
// run. The jobs are stored by `serve --queue --no-queue-consume` (one serve per queue, so every
// worker gets jobs of the same shape and options) while the queue is paused; then the queue is
// resumed, and the time until every call reached the upstream and no job is left is the drain.
// Two jobs: `one` (one POST) and `two` (a POST, then a POST with the id the first answer
// carries). Workers are measured in turn (A B A B …, the order reversed every other round), each
// idling on its empty queue while another drains. Besides jobs/s, the worker's CPU time per job
// (/proc): steadier on a busy machine.
// Redis: a redis-server of its own on a free port (lib/redis-server.mjs), stopped at the end.
// Target: worker jobs/s >= 0.9x the baseline's, for each job, with --deliveries none (the baseline
// records nothing); the worker with its delivery log on (the default) is measured too, for
// information.
// --before DIR adds the worker of the build in DIR (a copy of an earlier version), fed by that
// build's serve. --trace-gc runs every worker under node --trace-gc and counts its garbage
// collections per drain: young-generation scavenges per 1,000 jobs follow what a job allocates.
//
//   node bench/scenarios/p11-drain.mjs [--quick] [--rounds N] [--jobs N] [--concurrency C] [--before DIR [--before-node PATH]] [--trace-gc]
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import {
  baselinesDir,
  bin,
  check,
  cpuSeconds,
  emitResult,
  fixture,
  LOAD_CPU,
  median,
  options,
  planRow,
  requireBuild,
  spread,
  startProcess,
  startScript,
} from '../lib/common.mjs';
import { startRedis } from '../lib/redis-server.mjs';

const USAGE = `Usage: node bench/scenarios/p11-drain.mjs [--quick] [--rounds N] [--jobs N] [--concurrency C] [--before DIR [--before-node PATH]] [--trace-gc]

P11: endpoint-service worker draining N queued background jobs (one HTTP POST each; and two
dependent POSTs) against a hand-written BullMQ worker with got, same run, own redis-server.
Target: worker jobs/s >= 0.90x the BullMQ worker's.

  --quick          fewer jobs and rounds (3 rounds x 1,500 jobs instead of 5 x 3,000)
  --rounds N       rounds per worker and job
  --jobs N         jobs per round
  --concurrency C  jobs at once, every worker (default 64)
  --before DIR     also measure the build in DIR (DIR/bin/endpoint-service.js, e.g. a copy of main)
  --before-node P  run the --before build's serve and worker under the Node.js binary P, to compare
                   Node.js versions (this build under the running one, the earlier under P)
  --trace-gc       run every worker under node --trace-gc and report its scavenges and
                   mark-compacts per 1,000 jobs (the tracing costs the workers a little CPU)
  -h, --help       this text
`;
const o = options(
  USAGE,
  { rounds: [5, 3], jobs: [3000, 1500], concurrency: [64, 64] },
  { before: { type: 'string' }, 'before-node': { type: 'string' }, 'trace-gc': { type: 'boolean', default: false } },
);
const nodeFlags = o['trace-gc'] ? ['--trace-gc'] : [];
requireBuild();
const redis = await startRedis();
if (redis === null) {
  console.log('P11 skipped: redis-server is not on PATH');
  emitResult('p11', [check('P11 skipped: no redis-server', 'n/a', 'information', null)]);
  process.exit(0);
}
const app = fixture('p11-drain');
const key = randomBytes(32).toString('base64');
const suffix = randomBytes(3).toString('hex');
// The workers measured: this build's, the BullMQ baseline, this build's with its delivery log on
// (the default), and with --before an earlier build's. The baseline records no delivery, so the
// worker held to the target runs with --deliveries none; the log's cost is the third's ratio.
const VARIANTS = ['service', 'baseline', 'logged', ...(o.before !== undefined ? ['before'] : [])];
const LABELS = { service: 'endpoint-service worker', baseline: 'BullMQ + got', logged: '+ delivery log', before: 'worker of --before' };
const bins = { service: bin, baseline: bin, logged: bin, before: o.before !== undefined ? path.resolve(o.before, 'bin/endpoint-service.js') : bin };
const nodes = { service: process.execPath, baseline: process.execPath, logged: process.execPath, before: o['before-node'] ?? process.execPath };
const names = Object.fromEntries(VARIANTS.map((v) => [v, `es-bench-p11-${v}-${suffix}`]));
const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
const queues = Object.fromEntries(VARIANTS.map((v) => [v, new Queue(names[v], { connection })]));
const started = [];
const start = async (p) => {
  const s = await p;
  started.push(s);
  return s;
};

const upstream = await start(startScript('peers/p9-upstream.mjs', [], { cpu: LOAD_CPU }));
const env = { ...process.env, UPSTREAM: upstream.url, ENDPOINT_SERVICE_QUEUE_KEY: key };
// The producers: idle while a queue drains, so on the load core with Redis and the upstream.
const serve = {};
for (const v of VARIANTS) {
  await queues[v].pause();
  serve[v] = await start(
    startProcess(
      [
        nodes[v],
        bins[v],
        'serve',
        app,
        '--port',
        '0',
        '--workers',
        '1',
        '--log-format',
        'json',
        '--queue',
        redis.url,
        '--queue-name',
        names[v],
        '--no-queue-consume',
      ],
      { cpu: LOAD_CPU, env, ready: /^endpoint-service listening on (\S+)$/m },
    ),
  );
}
// The workers under test, on the server core.
const workers = {};
for (const v of VARIANTS)
  workers[v] = await start(
    v === 'baseline'
      ? startProcess(
          [
            process.execPath,
            ...nodeFlags,
            path.join(baselinesDir, 'p11-bullmq-worker.mjs'),
            '--redis',
            redis.url,
            '--queue',
            names[v],
            '--upstream',
            upstream.url,
            '--concurrency',
            String(o.concurrency),
          ],
          { ready: /^(ready)$/m },
        )
      : startProcess(
          [
            nodes[v],
            ...nodeFlags,
            bins[v],
            'worker',
            app,
            '--queue',
            redis.url,
            '--queue-name',
            names[v],
            '--port',
            '0',
            '--concurrency',
            String(o.concurrency),
            '--log-format',
            'json',
            ...(v === 'service' ? ['--deliveries', 'none'] : []),
          ],
          { env, ready: /^endpoint-service worker listening on (\S+)$/m },
        ),
  );

/** With --trace-gc: each worker's collections so far, counted from the lines node writes to its stdout. */
const collections = Object.fromEntries(VARIANTS.map((v) => [v, { scavenges: 0, markCompacts: 0 }]));
if (o['trace-gc'])
  for (const v of VARIANTS) {
    let partial = '';
    workers[v].child.stdout.on('data', (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop();
      for (const line of lines) {
        if (/: Scavenge\b/.test(line)) collections[v].scavenges++;
        else if (/: Mark-Compact\b/.test(line)) collections[v].markCompacts++;
      }
    });
  }

async function upstreamCount() {
  return (await (await fetch(`${upstream.url}/_probes`)).json()).count;
}

/** Stores `n` jobs of `endpoint` through serve (the queue is paused), 32 requests at a time. */
async function fill(v, endpoint, n) {
  let next = 0;
  const one = async () => {
    while (next < n) {
      next++;
      const response = await fetch(`${serve[v].url}/${endpoint}`);
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`serve answered ${response.status} to /${endpoint}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, one));
  const counts = await queues[v].getJobCounts('paused', 'wait');
  if (counts.paused + counts.wait !== n) throw new Error(`${names[v]}: ${counts.paused + counts.wait} jobs stored, expected ${n}`);
}

/** Redis's count of commands run since its start: every command (those run by scripts too), and the scripts run by EVALSHA or EVAL (one round trip each). */
async function commandCounts() {
  const text = await connection.info('commandstats');
  const calls = (name) => Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { all: [...text.matchAll(/^cmdstat_\S+:calls=(\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0), scripts: calls('evalsha') + calls('eval') };
}

/** What the polling below costs the store, per poll: measured, and taken off each drain's counts. */
let pollCost = null;
async function poll(v) {
  return queues[v].getJobCounts('wait', 'active', 'paused', 'delayed', 'failed');
}
async function measurePollCost(v) {
  const a = await commandCounts();
  for (let i = 0; i < 20; i++) await poll(v);
  const b = await commandCounts();
  // INFO itself is one command.
  pollCost = { all: (b.all - a.all - 1) / 20, scripts: (b.scripts - a.scripts) / 20 };
}

/** Resumes the queue and times until the upstream saw every call and no job is left. */
async function drain(v, n, calls) {
  const before = await upstreamCount();
  if (pollCost === null) await measurePollCost(v);
  const commands0 = await commandCounts();
  let polls = 0;
  const gc0 = { ...collections[v] };
  const cpu0 = cpuSeconds(workers[v].pid);
  const redis0 = cpuSeconds(redis.pid);
  const t0 = performance.now();
  await queues[v].resume();
  for (;;) {
    await new Promise((r) => setTimeout(r, 10));
    if ((await upstreamCount()) < before + n * calls) continue;
    polls++;
    const c = await poll(v);
    if (c.failed > 0) {
      const reasons = new Set((await queues[v].getFailed(0, 20)).map((job) => job.failedReason));
      throw new Error(`${names[v]}: ${c.failed} jobs failed: ${[...reasons].join('; ')}`);
    }
    if (c.wait + c.active + c.paused + c.delayed === 0) break;
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(workers[v].pid) - cpu0;
  // The last lines may still be in the pipe: the collections of a drain are read after the pause below.
  // Redis's share, for planning how many workers one Redis serves (the polling here included: a few commands every 10 ms).
  const redisCpu = cpuSeconds(redis.pid) - redis0;
  await queues[v].pause();
  const commands1 = await commandCounts();
  const gc = collections[v];
  // The workers' own (and the resume and pause, a few commands per drain): the polls and the INFO taken off.
  const storeCommands = (field) => (commands1[field] - commands0[field] - polls * pollCost[field] - (field === 'all' ? 1 : 0)) / n;
  return {
    jobsPerSecond: n / seconds,
    cpuUsPerJob: (cpu * 1e6) / n,
    cpuPct: (100 * cpu) / seconds,
    redisUsPerJob: (redisCpu * 1e6) / n,
    scriptsPerJob: storeCommands('scripts'),
    commandsPerJob: storeCommands('all'),
    scavengesPer1000: ((gc.scavenges - gc0.scavenges) * 1000) / n,
    markCompactsPer1000: ((gc.markCompacts - gc0.markCompacts) * 1000) / n,
  };
}

const JOBS = [
  { endpoint: 'one', calls: 1, what: 'one POST per job' },
  { endpoint: 'two', calls: 2, what: 'two dependent POSTs per job' },
];
const results = {};
try {
  // A warm-up drain each, so every worker runs JIT-compiled code.
  for (const job of JOBS)
    for (const v of VARIANTS) {
      await fill(v, job.endpoint, Math.min(500, o.jobs));
      await drain(v, Math.min(500, o.jobs), job.calls);
    }
  for (const job of JOBS) {
    results[job.endpoint] = Object.fromEntries(VARIANTS.map((v) => [v, []]));
    for (let round = 0; round < o.rounds; round++) {
      for (const v of round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) {
        await fill(v, job.endpoint, o.jobs);
        results[job.endpoint][v].push(await drain(v, o.jobs, job.calls));
      }
    }
  }
} finally {
  for (const s of started.reverse()) await s.stop();
  await Promise.all(Object.values(queues).map((q) => q.close()));
  connection.disconnect();
  await redis.stop();
}

console.log(
  `P11 drain: ${o.jobs} queued jobs per round, ${o.rounds} rounds per worker, alternating; concurrency ${o.concurrency}; workers on core 0; Redis, upstream and serve (idle) on core 1`,
);
const checks = [];
const plan = [];
/** The count behind a per-1,000-jobs figure, over all rounds of a worker. */
const sumOf = (rounds, field) => Math.round(rounds.reduce((sum, x) => sum + (x[field] * o.jobs) / 1000, 0));
const ratioOf = (r, v, field) => median(r[v].map((x) => x[field])) / median(r.baseline.map((x) => x[field]));
for (const job of JOBS) {
  const r = results[job.endpoint];
  for (const v of VARIANTS)
    console.log(
      `  ${job.endpoint} (${job.what}) ${LABELS[v].padEnd(23)}  jobs/s ${spread(r[v].map((x) => x.jobsPerSecond))}   CPU ${spread(
        r[v].map((x) => x.cpuUsPerJob),
      )} µs/job   CPU ${spread(r[v].map((x) => x.cpuPct))}%   Redis CPU ${spread(r[v].map((x) => x.redisUsPerJob))} µs/job   store round trips ${spread(
        r[v].map((x) => x.scriptsPerJob),
        2,
      )}/job (scripts), commands ${spread(
        r[v].map((x) => x.commandsPerJob),
        1,
      )}/job${
        o['trace-gc']
          ? `   scavenges ${spread(
              r[v].map((x) => x.scavengesPer1000),
              1,
            )}/1,000 jobs, mark-compacts ${spread(
              r[v].map((x) => x.markCompactsPer1000),
              2,
            )}/1,000 jobs (sums: ${sumOf(r[v], 'scavengesPer1000')} scavenges, ${sumOf(r[v], 'markCompactsPer1000')} mark-compacts in ${r[v].length * o.jobs} jobs)`
          : ''
      }`,
    );
  const jobsRatio = ratioOf(r, 'service', 'jobsPerSecond');
  const cpuRatio = ratioOf(r, 'service', 'cpuUsPerJob');
  const redisRatio = ratioOf(r, 'service', 'redisUsPerJob');
  console.log(
    `  ${job.endpoint}: ratios (of medians) jobs/s ${jobsRatio.toFixed(2)}x, CPU per job ${cpuRatio.toFixed(2)}x, Redis CPU per job ${redisRatio.toFixed(2)}x`,
  );
  checks.push(check(`P11 drain jobs/s vs BullMQ+got (${job.endpoint})`, `${jobsRatio.toFixed(3)}x`, '>= 0.90x', jobsRatio >= 0.9));
  checks.push(check(`P11 (info) CPU per job vs BullMQ+got (${job.endpoint})`, `${cpuRatio.toFixed(2)}x`, 'information', null));
  const medianOf = (v) => median(r[v].map((x) => x.jobsPerSecond)).toFixed(0);
  plan.push(
    planRow(
      `one worker (--concurrency ${o.concurrency}): jobs/s, ${job.what}`,
      `${medianOf('service')} jobs/s (${jobsRatio.toFixed(2)}x)`,
      `BullMQ + got ${medianOf('baseline')} jobs/s`,
    ),
  );
  const median_ = (v, field) => median(r[v].map((x) => x[field]));
  const logJobs = median_('logged', 'jobsPerSecond') / median_('service', 'jobsPerSecond');
  const logCpu = median_('logged', 'cpuUsPerJob') / median_('service', 'cpuUsPerJob');
  console.log(`  ${job.endpoint}: with/without the delivery log: jobs/s ${logJobs.toFixed(2)}x, CPU per job ${logCpu.toFixed(2)}x`);
  checks.push(
    check(
      `P11 (info) worker with its delivery log (the default) vs without (${job.endpoint})`,
      `${logJobs.toFixed(2)}x (CPU ${logCpu.toFixed(2)}x)`,
      'information',
      null,
    ),
  );
  if (o.before !== undefined) {
    const before = ratioOf(r, 'before', 'jobsPerSecond');
    const beforeCpu = ratioOf(r, 'before', 'cpuUsPerJob');
    console.log(`  ${job.endpoint}: --before against the same baseline: jobs/s ${before.toFixed(2)}x, CPU per job ${beforeCpu.toFixed(2)}x`);
    checks.push(
      check(`P11 (info) --before jobs/s vs BullMQ+got (${job.endpoint})`, `${before.toFixed(3)}x (CPU ${beforeCpu.toFixed(2)}x)`, 'information', null),
    );
  }
}
emitResult('p11', checks, { plan });
