// P1: an endpoint with two query parameters and an empty success, served by the real binary
// (--workers 1), against a bare node:http server doing the same minimum work
// (baselines/p1-baseline.mjs: route, parse and check two parameters, empty 200 with x-request-id).
// Targets: >= 0.90x the baseline's req/s, p99 <= 1.2x the baseline's. The service runs with
// --deliveries none, as the baseline records nothing; with its delivery log on (the default) it
// is one more variant, for information (P16 holds the log to its own targets). A third variant serves the
// same endpoint with a <rate-limit> by client address in memory (fixtures/p1-query-limited/),
// against endpoint-service without it in the same run: target >= 0.90x req/s.
// Two more, for information: the same endpoint in Fastify 5 (baselines/p1-fastify.mjs), what a user
// would write by hand, with its logger off and on. serve logs every request, so Fastify with its
// logger is the like-for-like one; both logs go to stderr, which startProcess points at /dev/null.
// --driver wrk generates the load with wrk instead of autocannon (lib/common.mjs, loadTest).
// --otel adds the same service with tracing on (every request sampled, spans exported to
// bench/peers/otlp-sink.mjs); --before DIR adds the build in DIR (a copy of an earlier version:
// DIR/bin/endpoint-service.js), all measured in the same rounds; --before-node PATH (repeatable)
// runs that build under another Node.js too (one variant per binary), so two Node.js versions
// are measured on the same code in the same rounds.
//
//   node bench/scenarios/p1-query.mjs [--quick] [--rounds N] [--duration S] [--connections C] [--driver autocannon|wrk] [--otel] [--before DIR [--before-node PATH]...]
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  check,
  checkDriver,
  emitResult,
  fixture,
  latencyRatio,
  measureServer,
  median,
  options,
  requireBuild,
  spread,
  startProcess,
  startScript,
  startService,
  warmup,
  LOAD_CPU,
} from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/p1-query.mjs [--quick] [--rounds N] [--duration S] [--connections C]
                                        [--driver autocannon|wrk] [--otel] [--before DIR [--before-node PATH]...]

P1: an endpoint with two query parameters served by endpoint-service (--workers 1) against a
bare node:http server, measured alternately. Targets: req/s >= 0.90x, p99 <= 1.2x the baseline's.
Also the same endpoint with a <rate-limit> (in memory) against it without: req/s >= 0.90x.
For information, the same endpoint in Fastify 5 (bench/baselines/p1-fastify.mjs) with its logger off
and on.

  --quick          shorter run (3 rounds x 4 s instead of 5 x 10 s)
  --rounds N       rounds per variant
  --duration S     seconds of load per round
  --connections C  connections of the load generator (default 10)
  --driver D       load generator: autocannon (default, an npm package) or wrk
                   (wrk -t1 -cC -dSs --latency; wrk must be on PATH)
  --otel           also measure the service with tracing on: serve --otel, OTEL_TRACES_SAMPLER=always_on,
                   spans exported to bench/peers/otlp-sink.mjs (on the load generator's core)
  --before DIR     also measure the build in DIR (DIR/bin/endpoint-service.js, e.g. a copy of main)
  --before-node P  also run the --before build under the Node.js binary P (repeatable): one
                   more variant each, to compare Node.js versions on the same code
  -h, --help       this text
`;
const o = options(
  USAGE,
  { rounds: [5, 3], duration: [10, 4], connections: [10, 10] },
  {
    driver: { type: 'string', default: 'autocannon' },
    otel: { type: 'boolean', default: false },
    before: { type: 'string' },
    'before-node': { type: 'string', multiple: true },
  },
);
checkDriver(USAGE, o.driver);
requireBuild();
const app = fixture('p1-query');
const PATH = '/p1?a=hello&b=w%C3%B6rld';

// The baseline keeps no record of a request: the service is measured without its delivery log
// too, and with it as a variant of its own (the log's cost is P16's to measure and to hold).
const NO_LOG = ['--deliveries', 'none'];
const service = await startService(app, { extra: NO_LOG });
const baseline = await startScript('baselines/p1-baseline.mjs');
const limited = await startService(fixture('p1-query-limited'), { extra: NO_LOG });
const logged = await startService(app);
// stderr as for startService ('ignore', i.e. /dev/null), where serve's JSON log goes too.
const fastify = await startScript('baselines/p1-fastify.mjs');
const fastifyLogged = await startScript('baselines/p1-fastify.mjs', ['--logger']);
// The first three are compared by position below; every later one gets a ratio line of its own.
const variant = (name, server) => ({ name, url: server.url + PATH, server, samples: [] });
const fastifyVariant = variant('Fastify 5', fastify);
const fastifyLoggedVariant = variant('Fastify 5 + logger', fastifyLogged);
const loggedVariant = variant('+ delivery log', logged);
const variants = [
  variant('bare node:http', baseline),
  variant('endpoint-service', service),
  variant('  + <rate-limit>', limited),
  fastifyVariant,
  fastifyLoggedVariant,
  loggedVariant,
];
const helpers = [];
if (o.before !== undefined) {
  for (const node of [process.execPath, ...(o['before-node'] ?? [])]) {
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
    const before = await startProcess(
      [node, path.resolve(o.before, 'bin/endpoint-service.js'), 'serve', app, '--port', '0', '--workers', '1', '--log-format', 'json'],
      {
        ready: /^endpoint-service listening on (\S+)$/m,
        env: { ...process.env, ENDPOINT_SERVICE_STATE_DIR: mkdtempSync(path.join(os.tmpdir(), 'es-bench-state-')) },
      },
    );
    variants.push(variant(`before, Node ${version}`, before));
  }
}
if (o.otel) {
  const sink = await startScript('peers/otlp-sink.mjs', [], { cpu: LOAD_CPU });
  helpers.push(sink);
  const traced = await startService(app, {
    extra: ['--otel'],
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'always_on', OTEL_SDK_DISABLED: undefined },
  });
  variants.push(variant('tracing on (--otel)', traced));
}
try {
  for (const v of variants) await warmup(v.url, o.connections, o.driver);
  for (let round = 0; round < o.rounds; round++) {
    for (const v of variants) v.samples.push(await measureServer(v.server, v.url, { connections: o.connections, duration: o.duration, driver: o.driver }));
  }
} finally {
  await Promise.all([...variants.map((v) => v.server.stop()), ...helpers.map((h) => h.stop())]);
}

console.log(
  `P1 GET ${PATH}: ${o.connections} connections, ${o.rounds} rounds x ${o.duration} s per variant, alternating; server on core 0, ${o.driver} on core 1`,
);
for (const v of variants) {
  const s = v.samples;
  console.log(
    `  ${v.name.padEnd(20)} req/s ${spread(s.map((x) => x.rps))}   p50 ${spread(
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
const [base, svc, lim] = variants.map((v) => v.samples);
const rpsRatio = median(svc.map((x) => x.rps)) / median(base.map((x) => x.rps));
const p99 = latencyRatio(median(svc.map((x) => x.p99)), median(base.map((x) => x.p99)));
const cpuRatio = median(svc.map((x) => x.cpuUsPerReq)) / median(base.map((x) => x.cpuUsPerReq));
console.log(`  ratio service/bare (of medians): req/s ${rpsRatio.toFixed(2)}x, p99 ${p99.text}, CPU per request ${cpuRatio.toFixed(2)}x`);
const limitRatio = median(lim.map((x) => x.rps)) / median(svc.map((x) => x.rps));
const limitP99 = latencyRatio(median(lim.map((x) => x.p99)), median(svc.map((x) => x.p99)));
console.log(`  ratio with/without <rate-limit> (of medians): req/s ${limitRatio.toFixed(2)}x, p99 ${limitP99.text}`);
const m = (xs, key) => median(xs.map((x) => x[key]));
for (const v of variants.slice(3)) {
  console.log(
    `  ratio ${v.name}/bare: req/s ${(m(v.samples, 'rps') / m(base, 'rps')).toFixed(2)}x, p99 ${latencyRatio(m(v.samples, 'p99'), m(base, 'p99')).text}, CPU per request ${(m(v.samples, 'cpuUsPerReq') / m(base, 'cpuUsPerReq')).toFixed(2)}x; ` +
      `${v.name}/endpoint-service: req/s ${(m(v.samples, 'rps') / m(svc, 'rps')).toFixed(2)}x, CPU per request ${(m(v.samples, 'cpuUsPerReq') / m(svc, 'cpuUsPerReq')).toFixed(2)}x`,
  );
}
// The Fastify figures are information: the targets stay those against bare node:http.
const info = (name, a, b) =>
  check(
    `P1 (info) ${name}`,
    `${(m(a, 'rps') / m(b, 'rps')).toFixed(2)}x (CPU/req ${(m(a, 'cpuUsPerReq') / m(b, 'cpuUsPerReq')).toFixed(2)}x)`,
    'information',
    null,
  );
emitResult('p1', [
  check('P1 req/s vs bare node:http', `${rpsRatio.toFixed(3)}x`, '>= 0.90x', rpsRatio >= 0.9),
  check('P1 p99 vs bare node:http', p99.text, '<= 1.2x', p99.value === null ? null : p99.value <= 1.2),
  check('P1 with <rate-limit> vs without', `${limitRatio.toFixed(3)}x`, '>= 0.90x', limitRatio >= 0.9),
  info('Fastify 5 req/s vs bare node:http', fastifyVariant.samples, base),
  info('Fastify 5 + logger req/s vs bare', fastifyLoggedVariant.samples, base),
  info('service req/s vs Fastify 5 + logger', svc, fastifyLoggedVariant.samples),
  info('service with its delivery log (the default) req/s vs without', loggedVariant.samples, svc),
]);
