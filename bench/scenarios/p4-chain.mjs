// P4: request latency of an endpoint with a chain of 3 dependent tasks and 3 independent
// ones, each upstream call answered after 50 ms, at low load (one connection, one request at
// a time), against the ideal 3 x 50 ms. Target: median latency <= ideal + 10 ms. A hand-written got
// handler doing the same calls (baselines/p4-baseline.mjs) is measured alternately as a reference
// for what node and got themselves add.
//
//   node bench/scenarios/p4-chain.mjs [--quick] [--rounds N] [--duration S]
import { check, emitResult, fixture, LOAD_CPU, loadTest, median, options, requireBuild, spread, startScript, startService } from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/p4-chain.mjs [--quick] [--rounds N] [--duration S] [--delay MS]

P4: latency of an endpoint with a chain of 3 dependent tasks and 3 independent ones, one request
at a time, against the ideal 3 x delay. Target: median latency <= ideal + 10 ms.

  --quick          shorter run (2 rounds x 3 s instead of 3 x 6 s)
  --rounds N       rounds per variant
  --duration S     seconds of load per round
  --delay MS       the upstream's delay per call (default 50)
  -h, --help       this text
`;
const o = options(USAGE, { rounds: [3, 2], duration: [6, 3], delay: [50, 50] });
requireBuild();
const app = fixture('p4-chain');
const IDEAL = 3 * o.delay;

const upstream = await startScript('peers/upstream.mjs', ['--delay', String(o.delay)], { cpu: LOAD_CPU });
const service = await startService(app, { env: { ...process.env, UPSTREAM: upstream.url } });
const baseline = await startScript('baselines/p4-baseline.mjs', ['--upstream', upstream.url]);
// The upstream alone, called directly by autocannon: what one 50 ms call really takes on this
// machine (timer granularity, loopback, scheduling), so the ideal can also be read as 3 x that.
const variants = [
  { name: 'one upstream call', url: upstream.url + '/direct', samples: [] },
  { name: 'node:http + got', url: baseline.url + '/p4', samples: [] },
  { name: 'endpoint-service', url: service.url + '/p4', samples: [] },
];
try {
  for (const v of variants) await loadTest(v.url, { connections: 1, duration: 2 });
  for (let round = 0; round < o.rounds; round++) {
    for (const v of variants) v.samples.push(await loadTest(v.url, { connections: 1, duration: o.duration }));
  }
} finally {
  await Promise.all([service.stop(), baseline.stop(), upstream.stop()]);
}

console.log(
  `P4 chain of 3 + 3 independent HttpRequest tasks, upstream delay ${o.delay} ms (ideal ${IDEAL} ms): 1 connection, ${o.rounds} rounds x ${o.duration} s per variant, alternating`,
);
for (const v of variants) {
  const s = v.samples;
  console.log(
    `  ${v.name.padEnd(18)} latency p50 ${spread(
      s.map((x) => x.p50),
      1,
      ' ms',
    )}   mean ${spread(
      s.map((x) => x.mean),
      1,
      ' ms',
    )}   p99 ${spread(
      s.map((x) => x.p99),
      1,
      ' ms',
    )}   requests ${spread(s.map((x) => x.total))}`,
  );
}
const [direct, base, svc] = variants.map((v) => v.samples);
const svcP50 = median(svc.map((x) => x.p50));
const svcMean = median(svc.map((x) => x.mean));
const baseP50 = median(base.map((x) => x.p50));
const oneCall = median(direct.map((x) => x.mean));
console.log(
  `  service p50 - ideal: ${(svcP50 - IDEAL).toFixed(1)} ms (mean - ideal ${(svcMean - IDEAL).toFixed(1)} ms); got handler p50 - ideal: ${(baseP50 - IDEAL).toFixed(1)} ms`,
);
console.log(
  `  one upstream call takes ${oneCall.toFixed(1)} ms on average here: 3 x that is ${(3 * oneCall).toFixed(1)} ms; service mean - 3 x measured call: ${(svcMean - 3 * oneCall).toFixed(1)} ms`,
);
emitResult('p4', [
  check(
    'P4 median latency vs ideal 3 x 50 ms',
    `${svcP50.toFixed(1)} ms (ideal + ${(svcP50 - IDEAL).toFixed(1)})`,
    `<= ${IDEAL + 10} ms`,
    svcP50 <= IDEAL + 10,
  ),
]);
