// P17: what the deliveries page costs serve while someone watches it. P2's endpoint (one
// HttpRequest task to a local upstream) with the embedded delivery log, served twice by the real
// binary: with no page open, and with the page open and its live updates on (the list loaded,
// then a client holding /events, which the page's script opens, reading every row sent), measured
// alternately in the same rounds. Target: P2 with the page open >= 0.90x the req/s of no page.
//
//   node bench/scenarios/p17-page.mjs [--quick] [--rounds N] [--duration S] [--connections C]
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
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
  warmup,
} from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/p17-page.mjs [--quick] [--rounds N] [--duration S] [--connections C]

P17: the deliveries page's cost to serve. P2's endpoint with the embedded delivery log, with no page
open and with the page open and its live updates (server-sent events) on, measured alternately.
Target: req/s with the page open >= 0.90x of no page.

  --quick          shorter run (2 rounds x 4 s instead of 4 x 8 s)
  --rounds N       rounds per variant
  --duration S     seconds of load per round
  --connections C  autocannon connections (default 10)
  -h, --help       this text
`;
const o = options(USAGE, { rounds: [4, 2], duration: [8, 4], connections: [10, 10] });
requireBuild();

const token = randomBytes(24).toString('hex');
const key = randomBytes(32).toString('base64');
const upstream = await startScript('peers/upstream.mjs', [], { cpu: LOAD_CPU });
const stateDirs = [];
const freePort = () =>
  new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });

async function serve() {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'es-bench-p17-'));
  stateDirs.push(stateDir);
  const adminPort = await freePort();
  const server = await startService(fixture('p2-http-task'), {
    extra: ['--admin-port', String(adminPort)],
    env: {
      ...process.env,
      UPSTREAM: upstream.url,
      ENDPOINT_SERVICE_STATE_DIR: stateDir,
      ENDPOINT_SERVICE_DELIVERIES_KEY: key,
      ENDPOINT_SERVICE_ADMIN_TOKEN: token,
    },
  });
  return { server, url: `${server.url}/p2?a=hello&b=w%C3%B6rld`, admin: `http://127.0.0.1:${adminPort}` };
}

/** The page as a browser holds it open: the list once, then /events read as it comes. */
async function openPage(admin) {
  const headers = { authorization: `Bearer ${token}` };
  const list = await fetch(`${admin}/`, { headers });
  if (list.status !== 200) throw new Error(`the deliveries page answered ${list.status}`);
  await list.text();
  const watcher = { rows: 0, request: null };
  await new Promise((resolve, reject) => {
    watcher.request = http.get(`${admin}/events`, { headers }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`/events answered ${response.statusCode}`));
      response.setEncoding('utf8');
      response.on('data', (text) => (watcher.rows += text.split('event: delivery').length - 1));
      resolve();
    });
    watcher.request.on('error', reject);
  });
  return watcher;
}

const variants = [
  { name: 'P2, no page open', ...(await serve()), samples: [] },
  { name: 'P2, page open, live', ...(await serve()), samples: [] },
];
let watcher = null;
try {
  for (const v of variants) await warmup(v.url, o.connections);
  watcher = await openPage(variants[1].admin);
  for (let round = 0; round < o.rounds; round++) {
    for (const v of variants) v.samples.push(await measureServer(v.server, v.url, { connections: o.connections, duration: o.duration }));
  }
} finally {
  watcher?.request.destroy();
  await Promise.all([...variants.map((v) => v.server.stop()), upstream.stop()]);
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
}

console.log(
  `P17 the deliveries page: ${o.connections} connections, ${o.rounds} rounds x ${o.duration} s per variant, alternating; server on core 0, autocannon and upstream on core 1, the page's client in this script's process`,
);
for (const v of variants) {
  console.log(
    `  ${v.name.padEnd(22)} req/s ${spread(v.samples.map((x) => x.rps))}   p99 ${spread(
      v.samples.map((x) => x.p99),
      1,
      ' ms',
    )}   ${spread(
      v.samples.map((x) => x.cpuUsPerReq),
      1,
    )} µs/req`,
  );
}
const med = (v, k) => median(v.samples.map((x) => x[k]));
const ratio = med(variants[1], 'rps') / med(variants[0], 'rps');
console.log(
  `  ratio page open / no page: req/s ${ratio.toFixed(2)}x, CPU per request ${(med(variants[1], 'cpuUsPerReq') / med(variants[0], 'cpuUsPerReq')).toFixed(2)}x; rows the page was sent: ${watcher?.rows ?? 0}`,
);
const checks = [check('P17 P2 req/s with the page open vs none', `${ratio.toFixed(3)}x`, '>= 0.90x', ratio >= 0.9)];
if ((watcher?.rows ?? 0) === 0) checks.push(check('P17 the page received live rows', '0', '> 0', false));
emitResult('p17', checks);
