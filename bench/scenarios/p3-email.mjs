// P3: an endpoint with one Email task to a local SMTP server (peers/smtp-sink.mjs), served by the
// real binary (--workers 1) under autocannon, against a hand-written loop sending the same mail
// with a pooled nodemailer transport (baselines/p3-baseline.mjs), as many sends in flight as
// autocannon has connections. Rates are counted at the SMTP server: messages received in the
// measured window, (n - 1) / (last arrival - first arrival). Target: service >= 0.90x the loop.
// The loop needs no load generator; the service needs autocannon, which runs on core 1 with
// the SMTP server, so the service's core is its alone, like the loop's.
//
//   node bench/scenarios/p3-email.mjs [--quick] [--rounds N] [--duration S] [--connections C]
import { spawn } from 'node:child_process';
import path from 'node:path';
import {
  baselinesDir,
  check,
  emitResult,
  fixture,
  LOAD_CPU,
  loadTest,
  median,
  options,
  pinned,
  requireBuild,
  SERVER_CPU,
  spread,
  startScript,
  startService,
} from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/p3-email.mjs [--quick] [--rounds N] [--duration S] [--connections C]

P3: an endpoint with one Email task to a local SMTP server, against a pooled nodemailer loop
sending the same mail. Target: messages/s >= 0.90x the loop's.

  --quick          shorter run (2 rounds x 4 s instead of 4 x 8 s)
  --rounds N       rounds per variant
  --duration S     seconds per round
  --connections C  autocannon connections, and sends in flight for the loop (default 10)
  -h, --help       this text
`;
const o = options(USAGE, { rounds: [4, 2], duration: [8, 4], connections: [10, 10] });
requireBuild();
const app = fixture('p3-email');
const PATH = '/p3?a=hello&b=w%C3%B6rld';

const sink = await startScript('peers/smtp-sink.mjs', [], { cpu: LOAD_CPU, ipc: true, ready: /^(\d+)$/m });
const smtpUrl = `smtp://127.0.0.1:${sink.url}`;
let nextId = 0;
function arrivals(from, to) {
  const id = nextId++;
  return new Promise((resolve) => {
    const onMessage = (m) => {
      if (m?.id !== id) return;
      sink.child.off('message', onMessage);
      resolve(m);
    };
    sink.child.on('message', onMessage);
    sink.child.send({ type: 'count', id, from, to });
  });
}
const rateOf = (a) => (a.count > 1 ? ((a.count - 1) * 1000) / (a.last - a.first) : NaN);

function runBaseline(duration) {
  const argv = pinned(SERVER_CPU, [
    process.execPath,
    path.join(baselinesDir, 'p3-baseline.mjs'),
    '--smtp-url',
    smtpUrl,
    '--concurrency',
    String(o.connections),
    '--duration',
    String(duration),
  ]);
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`p3-baseline exited ${code}`))));
  });
}

const service = await startService(app, { extra: ['--smtp-url', smtpUrl] });
const samples = { loop: [], service: [] };
try {
  // Warm-up of both: JIT, pooled SMTP connections.
  await loadTest(service.url + PATH, { connections: o.connections, duration: 2 });
  await runBaseline(1);
  for (let round = 0; round < o.rounds; round++) {
    const b = await runBaseline(o.duration);
    const ba = await arrivals(b.from, b.to);
    samples.loop.push({ rate: rateOf(ba), received: ba.count, sent: b.sent });
    const s = await loadTest(service.url + PATH, { connections: o.connections, duration: o.duration });
    const sa = await arrivals(s.start, s.finish);
    samples.service.push({ rate: rateOf(sa), received: sa.count, answered: s.total, p99: s.p99 });
  }
} finally {
  await Promise.all([service.stop(), sink.stop()]);
}

console.log(
  `P3 one Email task per request: ${o.connections} connections / sends in flight, ${o.rounds} rounds x ${o.duration} s per variant, alternating; service or loop on core 0, SMTP server and autocannon on core 1`,
);
console.log(
  `  nodemailer pool loop  messages/s ${spread(samples.loop.map((x) => x.rate))}   received per round ${spread(samples.loop.map((x) => x.received))}`,
);
console.log(
  `  endpoint-service      messages/s ${spread(samples.service.map((x) => x.rate))}   received per round ${spread(samples.service.map((x) => x.received))}, ` +
    `2xx answers ${spread(samples.service.map((x) => x.answered))}, request p99 ${spread(
      samples.service.map((x) => x.p99),
      1,
      ' ms',
    )}`,
);
const r = median(samples.service.map((x) => x.rate)) / median(samples.loop.map((x) => x.rate));
console.log(`  ratio service/loop (of medians): ${r.toFixed(2)}x messages/s`);
emitResult('p3', [check('P3 messages/s vs nodemailer pool loop', `${r.toFixed(3)}x`, '>= 0.90x', r >= 0.9)]);
