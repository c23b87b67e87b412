// P7: --workers 2 against --workers 1 on the P1 endpoint. The machine has 2 cores and the load
// generator needs one of them, so two workers cannot get a core each: this measures what
// --workers 2 does on such a machine, not how the service scales. Neither the servers nor
// autocannon are pinned here (pinning two workers and autocannon onto two cores would only
// decide who shares); P1 has the pinned one-worker figure. No target: reported as measured.
//
//   node bench/scenarios/p7-workers.mjs [--quick] [--rounds N] [--duration S] [--connections C]
import { check, emitResult, fixture, latencyRatio, loadTest, median, options, requireBuild, spread, startService, warmup } from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/p7-workers.mjs [--quick] [--rounds N] [--duration S] [--connections C]

P7: --workers 2 against --workers 1 on the P1 endpoint, nothing pinned. Reported, no target.

  --quick          shorter run (2 rounds x 4 s instead of 4 x 8 s)
  --rounds N       rounds per variant
  --duration S     seconds of load per round
  --connections C  autocannon connections (default 10)
  -h, --help       this text
`;
const o = options(USAGE, { rounds: [4, 2], duration: [8, 4], connections: [10, 10] });
requireBuild();
const app = fixture('p1-query');
const PATH = '/p1?a=hello&b=w%C3%B6rld';

const one = await startService(app, { workers: 1, cpu: null });
const two = await startService(app, { workers: 2, cpu: null });
const variants = [
  { name: '--workers 1', server: one, samples: [] },
  { name: '--workers 2', server: two, samples: [] },
];
try {
  for (const v of variants) await warmup(v.server.url + PATH, o.connections);
  for (let round = 0; round < o.rounds; round++) {
    for (const v of variants) v.samples.push(await loadTest(v.server.url + PATH, { connections: o.connections, duration: o.duration, cpu: null }));
  }
} finally {
  await Promise.all([one.stop(), two.stop()]);
}
console.log(
  `P7 P1 endpoint, --workers 2 vs --workers 1: ${o.connections} connections, ${o.rounds} rounds x ${o.duration} s per variant, alternating, nothing pinned (2 cores shared by the server processes and autocannon)`,
);
for (const v of variants) {
  const s = v.samples;
  console.log(
    `  ${v.name.padEnd(12)} req/s ${spread(s.map((x) => x.rps))}   p50 ${spread(
      s.map((x) => x.p50),
      1,
      ' ms',
    )}   p99 ${spread(
      s.map((x) => x.p99),
      1,
      ' ms',
    )}`,
  );
}
const r = median(variants[1].samples.map((x) => x.rps)) / median(variants[0].samples.map((x) => x.rps));
const p99 = latencyRatio(median(variants[1].samples.map((x) => x.p99)), median(variants[0].samples.map((x) => x.p99)));
console.log(`  ratio 2 workers / 1 worker (of medians): req/s ${r.toFixed(2)}x, p99 ${p99.text}`);
emitResult('p7', [check('P7 --workers 2 vs --workers 1 req/s', `${r.toFixed(2)}x (p99 ${p99.text})`, 'report only', null)]);
