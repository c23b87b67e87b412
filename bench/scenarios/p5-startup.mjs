// P5: start-up time, from spawning `endpoint-service serve` to its ready line on stdout, for
// the example application (fixtures/contact-form) and for a generated 10,000-endpoint
// application (lib/generate-app.mjs, the one validate-scale.mjs uses), against `node -e ""`
// (spawn to exit) measured alternately in the same run. Targets: example <= baseline + 0.3 s;
// 10,000 endpoints <= baseline + 0.8 s (it was + 2 s before issue 17), and with --workers 2 no
// more than 1.2x the time of --workers 1. For information, 10,000 light P1-like endpoints too,
// and for the planning table (docs/performance.md) the start-up of a generated 50-endpoint
// application and `validate` of both generated applications (spawn to exit).
// Every process runs on core 0; nothing else of the bench runs meanwhile.
// --before DIR also starts the build in DIR (a checkout of an earlier version with its dist/
// built) with the generated 50- and 10,000-endpoint applications, each start right beside this
// build's start of the same application in every run (which of the two goes first alternates),
// and reports before / current of the medians.
//
//   node bench/scenarios/p5-startup.mjs [--quick] [--runs N] [--endpoints 10000] [--before DIR]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  beforeBuild,
  beforeRatio,
  bin,
  check,
  emitResult,
  median,
  options,
  pinned,
  planRow,
  repoRoot,
  requireBuild,
  SERVER_CPU,
  spread,
  startService,
} from '../lib/common.mjs';
import { generate, generateLight } from '../lib/generate-app.mjs';

const BOTH_CPUS = '0,1';

const USAGE = `Usage: node bench/scenarios/p5-startup.mjs [--quick] [--runs N] [--endpoints N] [--before DIR]

P5: start-up time of serve, spawn to ready line, for the example application and a generated
large one, against node -e "". Targets: example <= baseline + 0.3 s, large <= baseline + 0.8 s,
large with --workers 2 <= 1.2x large with --workers 1.

  --quick          fewer runs (3 instead of 5)
  --runs N         starts per application
  --endpoints N    endpoints of the generated application (default 10000)
  --before DIR     also start the build in DIR (a checkout with its dist/ built) with the
                   generated 50- and N-endpoint applications, beside this build in every run,
                   and report before/current of the medians
  -h, --help       this text
`;
const o = options(USAGE, { runs: [5, 3], endpoints: [10_000, 10_000] }, { before: { type: 'string' } });
const before = o.before === undefined ? null : beforeBuild(USAGE, o.before);
requireBuild();
const example = path.join(repoRoot, 'fixtures/contact-form/endpoints.xml');
const root = mkdtempSync(path.join(tmpdir(), 'es-bench-startup-'));
const large = generate(path.join(root, 'full'), o.endpoints);
// The planning table's small application: the generator's endpoints, 50 of them.
const SMALL = 50;
const small = generate(path.join(root, 'small'), SMALL);
// For information (no target): the same number of P1-like endpoints, to show how start-up
// depends on how much each endpoint holds, not only on how many there are.
const light = generateLight(path.join(root, 'light'), o.endpoints);
const mib = (file) => (statSync(file).size / 2 ** 20).toFixed(1);
const sizes = { large: mib(large), light: mib(light) };
// The example reads ${env:CRM_API_KEY}; the generated app ${env:CRM_TOKEN}. The SMTP pool is
// opened on first use only, so no SMTP server has to listen for a start.
const env = { ...process.env, CRM_API_KEY: 'bench-key', CRM_TOKEN: 'bench-token' };
const cpu = { node: [], example: [], large: [], light: [], large1: [], large2: [], small: [], beforeLarge: [], beforeSmall: [] };

// /usr/bin/time reports the CPU node -e "" used (10 ms resolution), to set against the CPU a
// server used until its ready line: on a shared machine CPU time moves less than wall time.
const hasTime = spawnSync('/usr/bin/time', ['-f', '%U', 'true']).status === 0;
function nodeBaseline() {
  const argv = pinned(SERVER_CPU, [...(hasTime ? ['/usr/bin/time', '-f', '@@cpu %U %S'] : []), process.execPath, '-e', '']);
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const m = /@@cpu ([\d.]+) ([\d.]+)/.exec(r.stderr ?? '');
  if (m) cpu.node.push((Number(m[1]) + Number(m[2])) * 1000);
  return ms;
}
/** `validate FILE`, spawn to exit, on the server core; a start that fails is not a figure. */
function validateRun(file) {
  const argv = pinned(SERVER_CPU, [process.execPath, bin, 'validate', file]);
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', env });
  if (r.status !== 0) throw new Error(`validate ${file} exited ${r.status}: ${(r.stdout + r.stderr).slice(-2000)}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
async function serveStart(file, extra, cpuList, { workers = 1, cpuSet = SERVER_CPU, cli = bin } = {}) {
  // stderr is kept (no load here) so that a failed start says why.
  const s = await startService(file, { env, extra, stderr: 'pipe', workers, cpu: cpuSet, cli });
  await s.stop();
  cpuList?.push(s.cpuAtReady * 1000);
  return s.readyMs;
}
/** This build's start of `file` into samples[key], and with --before the earlier build's beside it, first every other run. */
async function startBoth(run, file, key, beforeKey) {
  const current = async () => samples[key].push(await serveStart(file, [], cpu[key]));
  if (before === null) return current();
  const earlier = async () => samples[beforeKey].push(await serveStart(file, [], cpu[beforeKey], { cli: before.bin }));
  if (run % 2 === 0) {
    await current();
    await earlier();
  } else {
    await earlier();
    await current();
  }
}

const samples = {
  node: [],
  example: [],
  large: [],
  light: [],
  large1: [],
  large2: [],
  small: [],
  validateSmall: [],
  validateLarge: [],
  beforeLarge: [],
  beforeSmall: [],
};
try {
  // One untimed start of each: file system caches, as on any machine that has started it before.
  nodeBaseline();
  cpu.node.length = 0;
  await serveStart(example, ['--smtp-url', 'smtp://127.0.0.1:2525']);
  await serveStart(large, []);
  await serveStart(light, []);
  await serveStart(large, [], undefined, { workers: 2, cpuSet: BOTH_CPUS });
  await serveStart(small, []);
  if (before !== null) {
    await serveStart(large, [], undefined, { cli: before.bin });
    await serveStart(small, [], undefined, { cli: before.bin });
  }
  validateRun(small);
  validateRun(large);
  for (let i = 0; i < o.runs; i++) {
    samples.node.push(nodeBaseline());
    samples.example.push(await serveStart(example, ['--smtp-url', 'smtp://127.0.0.1:2525'], cpu.example));
    await startBoth(i, large, 'large', 'beforeLarge');
    samples.light.push(await serveStart(light, [], cpu.light));
    // --workers 1 and 2 on both cores: two workers are meant to compile side by side.
    samples.large1.push(await serveStart(large, [], cpu.large1, { cpuSet: BOTH_CPUS }));
    samples.large2.push(await serveStart(large, [], cpu.large2, { workers: 2, cpuSet: BOTH_CPUS }));
    await startBoth(i, small, 'small', 'beforeSmall');
    samples.validateSmall.push(validateRun(small));
    samples.validateLarge.push(validateRun(large));
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

const s = (xs) => spread(xs, 0, ' ms');
console.log(`P5 start-up, spawn to ready line, ${o.runs} runs each, alternating, on core 0`);
console.log(`  node -e ""                       ${s(samples.node)}${cpu.node.length ? `   CPU used ${s(cpu.node)}` : ''}`);
console.log(`  contact-form example             ${s(samples.example)}   CPU used until ready ${s(cpu.example)}`);
console.log(
  `  generated ${o.endpoints} endpoints      ${s(samples.large)}   CPU used until ready ${s(cpu.large)}   (${sizes.large} MiB, 3 tasks each, bench/lib/generate-app.mjs)`,
);
console.log(`  generated ${SMALL} endpoints         ${s(samples.small)}   CPU used until ready ${s(cpu.small)}`);
console.log(`  validate, ${SMALL} endpoints        ${s(samples.validateSmall)}   (spawn to exit)`);
console.log(`  validate, ${o.endpoints} endpoints     ${s(samples.validateLarge)}   (spawn to exit)`);
console.log(`  generated, cores 0-1, --workers 1 ${s(samples.large1)}`);
console.log(`  generated, cores 0-1, --workers 2 ${s(samples.large2)}`);
console.log(`  (info) ${o.endpoints} light endpoints ${s(samples.light)}   CPU used until ready ${s(cpu.light)}   (${sizes.light} MiB, P1-like, no task)`);
const base = median(samples.node);
const overExample = (median(samples.example) - base) / 1000;
const overLarge = (median(samples.large) - base) / 1000;
console.log(`  over baseline (medians): example +${overExample.toFixed(2)} s, ${o.endpoints} endpoints +${overLarge.toFixed(2)} s`);
if (cpu.node.length) {
  const c = median(cpu.node);
  console.log(
    `  CPU over node -e "" (medians): example +${((median(cpu.example) - c) / 1000).toFixed(2)} s, ${o.endpoints} endpoints +${((median(cpu.large) - c) / 1000).toFixed(2)} s, ${o.endpoints} light endpoints +${((median(cpu.light) - c) / 1000).toFixed(2)} s`,
  );
}
const workersRatio = median(samples.large2) / median(samples.large1);
console.log(`  --workers 2 / --workers 1 (medians): ${workersRatio.toFixed(2)}x`);
const beforeChecks = [];
if (before !== null) {
  console.log(`  --before ${o.before}:`);
  console.log(`    generated ${SMALL} endpoints         ${s(samples.beforeSmall)}   CPU used until ready ${s(cpu.beforeSmall)}`);
  console.log(`    generated ${o.endpoints} endpoints      ${s(samples.beforeLarge)}   CPU used until ready ${s(cpu.beforeLarge)}`);
  for (const [count, key, beforeKey] of [
    [SMALL, 'small', 'beforeSmall'],
    [o.endpoints, 'large', 'beforeLarge'],
  ]) {
    const wall = beforeRatio(samples[beforeKey], samples[key]);
    const used = beforeRatio(cpu[beforeKey], cpu[key]);
    console.log(`  before/current, ${count} endpoints (medians; min–max of the runs): start-up ${wall.text}, CPU until ready ${used.text}`);
    beforeChecks.push(
      check(`P5 (info) start-up of ${count} endpoints, before/current`, `${wall.value.toFixed(2)}x (CPU ${used.value.toFixed(2)}x)`, 'information', null),
    );
  }
}
const plain = (xs) => `${(median(xs) / 1000).toFixed(2)} s (+${((median(xs) - base) / 1000).toFixed(2)} s)`;
const nodeText = `node -e "" ${(base / 1000).toFixed(2)} s`;
emitResult(
  'p5',
  [
    check('P5 example start over node -e ""', `+${overExample.toFixed(2)} s`, '<= +0.3 s', overExample <= 0.3),
    check(`P5 ${o.endpoints}-endpoint start over node -e ""`, `+${overLarge.toFixed(2)} s`, '<= +0.8 s', overLarge <= 0.8),
    check(`P5 ${o.endpoints} endpoints, --workers 2 vs 1`, `${workersRatio.toFixed(2)}x`, '<= 1.2x', workersRatio <= 1.2),
    check(`P5 (info) ${o.endpoints} light endpoints over node -e ""`, `+${((median(samples.light) - base) / 1000).toFixed(2)} s`, 'information', null),
    ...beforeChecks,
  ],
  {
    plan: [
      planRow(`serve start-up to the ready line, ${SMALL} endpoints`, plain(samples.small), nodeText),
      planRow(`serve start-up to the ready line, ${o.endpoints} endpoints`, plain(samples.large), nodeText),
      planRow(`validate, ${SMALL} endpoints (spawn to exit)`, plain(samples.validateSmall), nodeText),
      planRow(`validate, ${o.endpoints} endpoints (spawn to exit)`, plain(samples.validateLarge), nodeText),
    ],
  },
);
