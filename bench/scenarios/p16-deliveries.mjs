// P16: what the delivery log costs a request. P1's endpoint (two query parameters, an empty
// success) and P2's (one HttpRequest task to a local upstream), each served by the real binary
// with --deliveries none, with the embedded log (SQLite in a state folder of its own) and with
// the log on Redis, measured alternately in the same rounds. Targets: P1 >= 0.95x and P2 >= 0.90x
// the req/s of --deliveries none, on either store. After the rounds, the database file's bytes
// per kept delivery are read (a GET of P1 keeps its headers, sealed). Each variant's line of CPU
// per request ends with the Redis server's (INFO cpu), which runs on the same two cores.
//
//   node bench/scenarios/p16-deliveries.mjs [--quick] [--rounds N] [--duration S] [--connections C] [--redis URL]
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import {
  check,
  emitResult,
  fixture,
  LOAD_CPU,
  measureServer,
  median,
  options,
  requireBuild,
  spread,
  startScript,
  startService,
  threadBreakdown,
  warmup,
} from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/p16-deliveries.mjs [--quick] [--rounds N] [--duration S] [--connections C] [--redis URL]

P16: the delivery log's cost per request. P1's endpoint and P2's, each served with --deliveries none,
with the embedded log (SQLite) and with the log on Redis, measured alternately.
Targets: req/s with the log >= 0.95x (P1) and >= 0.90x (P2) of --deliveries none.

  --quick          shorter run (2 rounds x 4 s instead of 4 x 8 s)
  --rounds N       rounds per variant
  --duration S     seconds of load per round
  --connections C  autocannon connections (default 10)
  --redis URL      the Redis of the third variant (default redis://127.0.0.1:6379; keys under a
                   namespace of this run, removed afterwards)
  -h, --help       this text
`;
const o = options(USAGE, { rounds: [4, 2], duration: [8, 4], connections: [10, 10] }, { redis: { type: 'string', default: 'redis://127.0.0.1:6379' } });
requireBuild();

const namespace = `es-bench-${randomBytes(4).toString('hex')}`;
const key = randomBytes(32).toString('base64');
const upstream = await startScript('peers/upstream.mjs', [], { cpu: LOAD_CPU });
const stateDirs = [];
const serveWith = (app, extra, path1) => {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'es-bench-p16-'));
  stateDirs.push(stateDir);
  return startService(app, {
    extra,
    env: {
      ...process.env,
      UPSTREAM: upstream.url,
      ENDPOINT_SERVICE_STATE_DIR: stateDir,
      ENDPOINT_SERVICE_DELIVERIES_KEY: key,
      ENDPOINT_SERVICE_DELIVERIES_NAMESPACE: namespace,
    },
  }).then((server) => ({ server, url: server.url + path1, stateDir }));
};

const P1 = '/p1?a=hello&b=w%C3%B6rld';
const P2 = '/p2?a=hello&b=w%C3%B6rld';
const groups = [];
for (const [name, app, target, url] of [
  ['P1', fixture('p1-query'), 0.95, P1],
  ['P2', fixture('p2-http-task'), 0.9, P2],
]) {
  const variants = [];
  for (const [label, extra] of [
    ['--deliveries none', ['--deliveries', 'none']],
    ['embedded (SQLite)', []],
    ['Redis', ['--deliveries', o.redis]],
  ]) {
    const started = await serveWith(app, extra, url);
    variants.push({ name: `${name} ${label}`, ...started, samples: [] });
  }
  groups.push({ name, target, variants });
}
const all = groups.flatMap((g) => g.variants);
let fileBytes = null;
try {
  for (const v of all) await warmup(v.url, o.connections);
  for (let round = 0; round < o.rounds; round++) {
    for (const v of all) {
      const before = await redisCpuSeconds(o.redis);
      const sample = await measureServer(v.server, v.url, { connections: o.connections, duration: o.duration });
      sample.redisUsPerReq = sample.total > 0 ? (((await redisCpuSeconds(o.redis)) - before) * 1e6) / sample.total : NaN;
      v.samples.push(sample);
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  // The embedded P1 log: its files' bytes over the deliveries it holds.
  const embedded = groups[0].variants[1];
  const { DatabaseSync } = await import('node:sqlite');
  const db = new DatabaseSync(path.join(embedded.stateDir, 'deliveries.db'));
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  const count = Number(db.prepare('select count(*) as n from deliveries').get().n);
  db.close();
  const bytes = readdirSync(embedded.stateDir)
    .filter((f) => f.startsWith('deliveries.db'))
    .reduce((sum, f) => sum + statSync(path.join(embedded.stateDir, f)).size, 0);
  fileBytes = { count, bytes, perDelivery: bytes / count };
} finally {
  await Promise.all([...all.map((v) => v.server.stop()), upstream.stop()]);
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
  await removeKeys(o.redis, `${namespace}:*`);
}

/**
 * The Redis server's CPU seconds so far (INFO cpu): what a variant costs Redis, which runs on the
 * same two cores. Another client of the same Redis adds to it; the variants without Redis show
 * how much.
 */
async function redisCpuSeconds(url) {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const info = await redis.info('cpu');
    const field = (name) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? NaN);
    return field('used_cpu_user') + field('used_cpu_sys');
  } finally {
    redis.disconnect();
  }
}

/**
 * The run's keys, a page at a time: a full run leaves millions (every delivery of the Redis
 * variant), which other users of the same Redis would otherwise scan past for days.
 */
async function removeKeys(url, pattern) {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 5000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

console.log(
  `P16 the delivery log: ${o.connections} connections, ${o.rounds} rounds x ${o.duration} s per variant, alternating; server on core 0, autocannon and upstream on core 1`,
);
const med = (v, k) => median(v.samples.map((x) => x[k]));
const checks = [];
for (const g of groups) {
  for (const v of g.variants) {
    console.log(
      `  ${v.name.padEnd(24)} req/s ${spread(v.samples.map((x) => x.rps))}   p99 ${spread(
        v.samples.map((x) => x.p99),
        1,
        ' ms',
      )}   ${spread(
        v.samples.map((x) => x.cpuUsPerReq),
        1,
      )} µs/req`,
    );
  }
  for (const v of g.variants) {
    const redisUs = median(v.samples.map((x) => x.redisUsPerReq));
    console.log(`    ${v.name}: CPU µs per request by thread: ${threadBreakdown(v.samples, 0.5)}; Redis server ${redisUs.toFixed(1)}`);
  }
  const [none, ...logged] = g.variants;
  for (const v of logged) {
    const ratio = med(v, 'rps') / med(none, 'rps');
    console.log(`  ratio ${v.name} / none: req/s ${ratio.toFixed(2)}x, CPU per request ${(med(v, 'cpuUsPerReq') / med(none, 'cpuUsPerReq')).toFixed(2)}x`);
    checks.push(check(`${v.name} req/s vs --deliveries none`, `${ratio.toFixed(3)}x`, `>= ${g.target.toFixed(2)}x`, ratio >= g.target));
  }
}
if (fileBytes !== null && Number.isFinite(fileBytes.count)) {
  console.log(
    `  embedded store: ${fileBytes.count} deliveries in ${(fileBytes.bytes / 1048576).toFixed(1)} MiB of files, ${fileBytes.perDelivery.toFixed(0)} bytes per kept delivery (P1's GET, headers sealed)`,
  );
  checks.push(check('P16 (info) bytes per kept delivery, embedded', `${fileBytes.perDelivery.toFixed(0)}`, 'information', null));
}
emitResult('p16', checks);
