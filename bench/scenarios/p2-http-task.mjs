// P2: an endpoint with one HttpRequest task to a local upstream (peers/upstream.mjs), served by the
// real binary (--workers 1), against hand-written node:http handlers making the same call
// (baselines/p2-baseline.mjs): with got (the target's baseline) and with Node's global fetch
// (undici). Target: service >= 0.90x the got handler's req/s. The fetch/got ratio is for
// information.
// The upstream runs on the load core with autocannon, so the server's core is its alone.
//
//   node bench/scenarios/p2-http-task.mjs [--quick] [--rounds N] [--duration S] [--connections C]
import {
  check,
  emitResult,
  fixture,
  LOAD_CPU,
  planRow,
  measureServer,
  median,
  options,
  requireBuild,
  spread,
  startScript,
  startService,
  warmup,
} from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/p2-http-task.mjs [--quick] [--rounds N] [--duration S] [--connections C]

P2: an endpoint with one HttpRequest task to a local upstream, against node:http handlers making
the same call with got and with fetch. Target: req/s >= 0.90x the got handler's.

  --quick          shorter run (2 rounds x 4 s instead of 4 x 8 s)
  --rounds N       rounds per variant
  --duration S     seconds of load per round
  --connections C  autocannon connections (default 10)
  -h, --help       this text
`;
const o = options(USAGE, { rounds: [4, 2], duration: [8, 4], connections: [10, 10] });
requireBuild();
const app = fixture('p2-http-task');
const PATH = '/p2?a=hello&b=w%C3%B6rld';

const upstream = await startScript('peers/upstream.mjs', [], { cpu: LOAD_CPU });
// The baselines keep no record of a request: the service is measured without its delivery log,
// and with it (the default) as a variant of its own, for information (P16 holds the log's cost).
const service = await startService(app, { env: { ...process.env, UPSTREAM: upstream.url }, extra: ['--deliveries', 'none'] });
const logged = await startService(app, { env: { ...process.env, UPSTREAM: upstream.url } });
const viaGot = await startScript('baselines/p2-baseline.mjs', ['--client', 'got', '--upstream', upstream.url]);
const viaFetch = await startScript('baselines/p2-baseline.mjs', ['--client', 'fetch', '--upstream', upstream.url]);
const variants = [
  { name: 'node:http + got', server: viaGot, samples: [] },
  { name: 'node:http + fetch', server: viaFetch, samples: [] },
  { name: 'endpoint-service', server: service, samples: [] },
  { name: '+ delivery log', server: logged, samples: [] },
];
try {
  for (const v of variants) await warmup(v.server.url + PATH, o.connections);
  for (let round = 0; round < o.rounds; round++) {
    for (const v of variants) v.samples.push(await measureServer(v.server, v.server.url + PATH, { connections: o.connections, duration: o.duration }));
  }
} finally {
  await Promise.all([service.stop(), logged.stop(), viaGot.stop(), viaFetch.stop(), upstream.stop()]);
}

console.log(
  `P2 GET ${PATH} with one HttpRequest task: ${o.connections} connections, ${o.rounds} rounds x ${o.duration} s per variant, alternating; server on core 0, autocannon and upstream on core 1`,
);
for (const v of variants) {
  const s = v.samples;
  console.log(
    `  ${v.name.padEnd(18)} req/s ${spread(s.map((x) => x.rps))}   p50 ${spread(
      s.map((x) => x.p50),
      1,
      ' ms',
    )}   p99 ${spread(
      s.map((x) => x.p99),
      1,
      ' ms',
    )}   ` +
      `server CPU ${spread(s.map((x) => x.cpuPct))} %, ${spread(
        s.map((x) => x.cpuUsPerReq),
        1,
      )} µs/req`,
  );
}
const med = (v, k) => median(v.samples.map((x) => x[k]));
const [got, fetch, svc, withLog] = variants;
const vsGot = med(svc, 'rps') / med(got, 'rps');
const logRatio = med(withLog, 'rps') / med(svc, 'rps');
const fetchVsGot = med(fetch, 'rps') / med(got, 'rps');
console.log(
  `  ratios (of medians): service/got req/s ${vsGot.toFixed(2)}x (CPU per request ${(med(svc, 'cpuUsPerReq') / med(got, 'cpuUsPerReq')).toFixed(2)}x); ` +
    `fetch/got req/s ${fetchVsGot.toFixed(2)}x (CPU per request ${(med(fetch, 'cpuUsPerReq') / med(got, 'cpuUsPerReq')).toFixed(2)}x); ` +
    `with/without the delivery log req/s ${logRatio.toFixed(2)}x (CPU per request ${(med(withLog, 'cpuUsPerReq') / med(svc, 'cpuUsPerReq')).toFixed(2)}x)`,
);
emitResult(
  'p2',
  [
    check('P2 req/s vs node:http + got', `${vsGot.toFixed(3)}x`, '>= 0.90x', vsGot >= 0.9),
    check('P2 (info) global fetch vs got baseline', `${fetchVsGot.toFixed(2)}x`, 'information', null),
    check('P2 (info) service with its delivery log (the default) vs without', `${logRatio.toFixed(2)}x`, 'information', null),
  ],
  {
    plan: [
      planRow(
        'one serve process (--workers 1): endpoint with one HttpRequest task, in-process',
        `${med(svc, 'rps').toFixed(0)} req/s (${vsGot.toFixed(2)}x)`,
        `node:http + got ${med(got, 'rps').toFixed(0)} req/s`,
      ),
    ],
  },
);
