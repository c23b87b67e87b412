// P16's floor: how much of the delivery log's cost on P1 any design would pay. Beside
// --deliveries none and the embedded log as built, two builds made from this one's dist/ in a
// folder of their own (never the clone's) leave out a part of the log:
//   record   the record is made at the response's close as always; the log drops it at once
//   handover the record is buffered, encoded, sent to the writer thread and decoded there, which
//            answers without sealing or writing
// Measured alternately in the same rounds, so each ratio stands on its own. What the first
// costs, no log can avoid; what the second adds is the log's hand-over as built.
//
//   node bench/scenarios/p16-floor.mjs [--quick] [--rounds N] [--duration S] [--connections C]
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  bin,
  check,
  emitResult,
  fixture,
  measureServer,
  median,
  options,
  repoRoot,
  requireBuild,
  spread,
  startService,
  threadBreakdown,
  warmup,
} from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/p16-floor.mjs [--quick] [--rounds N] [--duration S] [--connections C]

P16's floor: P1 with --deliveries none, with the embedded log as built, and with two builds made
from dist/ that leave out a part of the log (the record only; everything but sealing and
writing), measured alternately. Information only: it bounds what any design of the log costs.

  --quick          shorter run (2 rounds x 4 s instead of 4 x 8 s)
  --rounds N       rounds per variant
  --duration S     seconds of load per round
  --connections C  autocannon connections (default 10)
  -h, --help       this text
`;
const o = options(USAGE, { rounds: [4, 2], duration: [8, 4], connections: [10, 10] });
requireBuild();

/** Each cut: the file of dist/ it changes, the text it replaces (exactly once) and the replacement. */
const CUTS = {
  record: { file: 'deliveries/log.js', find: '    add(entry) {\n', put: '    add(entry) {\n        return;\n' },
  handover: {
    file: 'deliveries/writer-thread.js',
    find: 'writer.write(decodeBatch(request.batch, shared))',
    put: '(decodeBatch(request.batch, shared), Promise.resolve())',
  },
};

const scratch = mkdtempSync(path.join(os.tmpdir(), 'es-bench-p16-floor-'));
/** A copy of this build with `cut` made; its CLI's path. Fails when dist/ no longer has the text, so a changed log cannot be measured as a cut one. */
function cutBuild(name, cut) {
  const root = path.join(scratch, name);
  cpSync(path.join(repoRoot, 'dist'), path.join(root, 'dist'), { recursive: true });
  cpSync(path.join(repoRoot, 'bin'), path.join(root, 'bin'), { recursive: true });
  cpSync(path.join(repoRoot, 'package.json'), path.join(root, 'package.json'));
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(root, 'node_modules'));
  const file = path.join(root, 'dist', cut.file);
  const text = readFileSync(file, 'utf8');
  if (text.split(cut.find).length !== 2) throw new Error(`p16-floor: dist/${cut.file} no longer holds ${JSON.stringify(cut.find)} once; update CUTS`);
  writeFileSync(file, text.replace(cut.find, cut.put));
  return path.join(root, 'bin/endpoint-service.js');
}

const key = randomBytes(32).toString('base64');
const url = '/p1?a=hello&b=w%C3%B6rld';
const variants = [];
try {
  const builds = [
    ['--deliveries none', bin, ['--deliveries', 'none']],
    ['the log as built', bin, []],
    ['record only', cutBuild('record', CUTS.record), []],
    ['all but the store', cutBuild('handover', CUTS.handover), []],
  ];
  for (const [name, cli, extra] of builds) {
    const stateDir = mkdtempSync(path.join(scratch, 'state-'));
    const server = await startService(fixture('p1-query'), {
      cli,
      extra,
      env: { ...process.env, ENDPOINT_SERVICE_STATE_DIR: stateDir, ENDPOINT_SERVICE_DELIVERIES_KEY: key },
    });
    variants.push({ name, server, url: server.url + url, samples: [] });
  }
  for (const v of variants) await warmup(v.url, o.connections);
  for (let round = 0; round < o.rounds; round++) {
    for (const v of variants) v.samples.push(await measureServer(v.server, v.url, { connections: o.connections, duration: o.duration }));
  }
} finally {
  await Promise.all(variants.map((v) => v.server.stop()));
  rmSync(scratch, { recursive: true, force: true });
}

console.log(
  `P16 floor: P1, ${o.connections} connections, ${o.rounds} rounds x ${o.duration} s per variant, alternating; server on core 0, autocannon on core 1`,
);
const med = (v, k) => median(v.samples.map((x) => x[k]));
const [none, ...logged] = variants;
const checks = [];
for (const v of variants)
  console.log(
    `  ${v.name.padEnd(20)} req/s ${spread(v.samples.map((x) => x.rps))}   ${spread(
      v.samples.map((x) => x.cpuUsPerReq),
      1,
    )} µs/req`,
  );
for (const v of variants) console.log(`    ${v.name}: CPU µs per request by thread: ${threadBreakdown(v.samples, 0.05)}`);
for (const v of logged) {
  const ratio = med(v, 'rps') / med(none, 'rps');
  const cpu = med(v, 'cpuUsPerReq') / med(none, 'cpuUsPerReq');
  console.log(`  ratio ${v.name} / none: req/s ${ratio.toFixed(2)}x, CPU per request ${cpu.toFixed(2)}x`);
  checks.push(check(`P16 floor (info) ${v.name} req/s vs --deliveries none`, `${ratio.toFixed(3)}x (CPU ${cpu.toFixed(2)}x)`, 'information', null));
}
emitResult('p16-floor', checks);
