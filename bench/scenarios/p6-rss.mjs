// P6: memory under sustained P1 load. The real binary (--workers 1) serves the P1 endpoint
// under autocannon for 60 s; VmRSS of the serving process (/proc/PID/status) is sampled every
// second. Target: RSS at 60 s within 10% of RSS at 10 s. --quick shortens the run to 25 s
// (RSS at 10 s vs at 25 s), which is a weaker check, and says so.
//
//   node bench/scenarios/p6-rss.mjs [--quick] [--duration S] [--connections C]
import { check, emitResult, fixture, loadTest, options, requireBuild, rssMiB, startService } from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/p6-rss.mjs [--quick] [--duration S] [--connections C]

P6: RSS of serve (--workers 1) under P1 load, sampled every second. Target: RSS at the end
within 10% of RSS at 10 s.

  --quick          25 s of load instead of 60 s (a weaker check)
  --duration S     seconds of load
  --connections C  autocannon connections (default 10)
  -h, --help       this text
`;
const o = options(USAGE, { duration: [60, 25], connections: [10, 10] });
requireBuild();
const app = fixture('p1-query');
const PATH = '/p1?a=hello&b=w%C3%B6rld';

const service = await startService(app);
const samples = [];
let load;
try {
  const atStart = rssMiB(service.pid);
  const t0 = performance.now();
  load = loadTest(service.url + PATH, { connections: o.connections, duration: o.duration });
  // Sample once a second until the load ends; t is seconds since the load was started.
  const timer = setInterval(() => samples.push({ t: (performance.now() - t0) / 1000, rss: rssMiB(service.pid) }), 1000);
  load = await load;
  clearInterval(timer);
  const after = rssMiB(service.pid);
  const at = (s) => samples.reduce((best, x) => (Math.abs(x.t - s) < Math.abs(best.t - s) ? x : best));
  const early = at(10);
  const late = samples.at(-1);
  const peak = Math.max(...samples.map((x) => x.rss));
  const growth = late.rss / early.rss - 1;
  console.log(
    `P6 RSS under P1 load for ${o.duration} s${o.quick ? ' (--quick: shortened from 60 s)' : ''}: ${o.connections} connections, ${load.rps.toFixed(0)} req/s average, ${load.total} requests`,
  );
  console.log(
    `  RSS before load ${atStart.toFixed(1)} MiB; at ${early.t.toFixed(0)} s ${early.rss.toFixed(1)} MiB; at ${late.t.toFixed(0)} s ${late.rss.toFixed(1)} MiB; peak ${peak.toFixed(1)} MiB; after load ${after.toFixed(1)} MiB`,
  );
  console.log(
    `  every 5 s: ${samples
      .filter((x, i) => i % 5 === 4)
      .map((x) => `${x.t.toFixed(0)}s ${x.rss.toFixed(1)}`)
      .join(', ')} (MiB)`,
  );
  console.log(`  growth from ${early.t.toFixed(0)} s to ${late.t.toFixed(0)} s: ${(growth * 100).toFixed(1)}%`);
  emitResult('p6', [
    check(
      `P6 RSS growth ${early.t.toFixed(0)} s -> ${late.t.toFixed(0)} s`,
      `${early.rss.toFixed(1)} -> ${late.rss.toFixed(1)} MiB (${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)}%)`,
      'within 10%',
      Math.abs(growth) <= 0.1,
    ),
  ]);
} finally {
  await service.stop();
}
