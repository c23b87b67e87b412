// `npm run bench`: runs the scenarios one after the other, each in a process of its own, and
// ends with a summary of every target. Not part of `npm test`: figures are for people, and on
// a shared machine they move; each scenario measures its baseline in the same run.
//
//   npm run bench                      all scenarios, full durations (about 10 minutes)
//   npm run bench -- --quick           shorter durations and fewer rounds (a few minutes)
//   npm run bench -- p1 p5 [--quick]   only the scenarios P1 and P5
//
// Build first: npx tsc -p tsconfig.json (the scenarios start bin/endpoint-service.js).
// The scripts are in bench/scenarios/ (bench/README.md).
import { spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { commandLine, usageError } from './lib/cli.mjs';
import { requireBuild, scenariosDir } from './lib/common.mjs';

const SCENARIOS = [
  ['p1', 'p1-query.mjs', 'endpoint with two query parameters vs bare node:http (and Fastify 5)'],
  ['p2', 'p2-http-task.mjs', 'one HttpRequest task vs node:http + got (and + fetch)'],
  ['p3', 'p3-email.mjs', 'one Email task vs a pooled nodemailer loop'],
  ['p4', 'p4-chain.mjs', 'chain of 3 + 3 independent tasks vs the ideal 150 ms'],
  ['p5', 'p5-startup.mjs', 'start-up vs node -e ""'],
  ['p6', 'p6-rss.mjs', 'RSS under 60 s of P1 load'],
  ['p7', 'p7-workers.mjs', '--workers 2 vs --workers 1'],
  ['p8', 'p8-uploads.mjs', 'peak RSS under concurrent 9 MB uploads'],
  ['p9', 'p9-queue.mjs', 'background task via --queue + worker vs in-process (needs Redis)'],
  ['p10', 'p10-memory.mjs', 'heap of a compiled 10,000-endpoint application'],
  ['p11', 'p11-drain.mjs', 'worker draining queued jobs vs a BullMQ worker with got (own redis-server)'],
  ['p12', 'p12-enqueue.mjs', 'serve --queue storing jobs vs node:http + Queue.add (own redis-server)'],
  ['p13', 'p13-webhook.mjs', 'a 21 KB webhook delivery: five JSONPath parameters vs query string'],
  ['p14', 'p14-signature.mjs', 'a signed 20 KB webhook delivery vs the same endpoint unsigned'],
  ['p15', 'p15-dedup.mjs', '<deduplicate> on Redis vs none (needs Redis)'],
  ['p16', 'p16-deliveries.mjs', 'the delivery log (SQLite, Redis) vs --deliveries none (needs Redis)'],
  ['p16f', 'p16-floor.mjs', "P1 with parts of the delivery log left out: the floor of any log's cost"],
  ['p17', 'p17-page.mjs', 'P2 with the deliveries page open and live vs no page'],
];

const USAGE = `Usage: npm run bench -- [--quick] [p1 ... p17, p16f]
       node bench/run.mjs [--quick] [p1 ... p17, p16f]

Runs the scenarios (all, or those named) one after the other and ends with a summary of every
target. Each scenario also runs alone: node bench/scenarios/SCRIPT --help.

  --quick     shorter durations and fewer rounds (a few minutes instead of about 10)
  -h, --help  this text

Scenarios (bench/scenarios/):
${SCENARIOS.map(([name, script, what]) => `  ${name.padEnd(5)}${script.padEnd(19)} ${what}`).join('\n')}
`;
const { values, positionals } = commandLine(USAGE, { quick: { type: 'boolean', default: false } }, { positionals: true });
const quick = values.quick;
const filters = positionals.map((a) => a.toLowerCase());
// By name (p1 is P1, not P10 too) or by the start of the script's name (p1-query). A name is
// never taken as the start of a script's name: 'p10-memory.mjs' starts with 'p1'.
const isName = (f) => SCENARIOS.some(([name]) => name === f);
const selected = SCENARIOS.filter(([name, script]) => filters.length === 0 || filters.some((f) => name === f || (!isName(f) && script.startsWith(f))));
if (selected.length === 0) usageError(USAGE, `no scenario matches ${filters.join(', ')}; known: ${SCENARIOS.map(([n]) => n).join(', ')}`);
requireBuild();

const sh = (cmd, argv) => spawnSync(cmd, argv, { encoding: 'utf8' }).stdout?.trim() ?? '';
console.log(`endpoint-service bench${quick ? ' (--quick)' : ''}: ${selected.map(([n]) => n).join(', ')}`);
console.log(
  `node ${process.version}, ${os.cpus().length} CPUs (nproc ${sh('nproc', [])}), ${os.cpus()[0]?.model ?? '?'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(`started ${new Date().toISOString()}\n`);

function runScenario(script) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(scenariosDir, script), ...(quick ? ['--quick'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buffered = '';
    const results = [];
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.startsWith('@@result ')) results.push(JSON.parse(line.slice(9)));
        else console.log(line);
      }
    });
    child.once('exit', (code) => resolve({ code, results }));
  });
}

const summary = [];
const plan = [];
const t0 = performance.now();
for (const [name, script] of selected) {
  const started = performance.now();
  const { code, results } = await runScenario(script);
  console.log(`  (${name}: ${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
  if (code !== 0 || results.length === 0) summary.push({ name: `${name}: failed (exit ${code})`, value: '', target: '', met: false });
  for (const r of results) {
    summary.push(...r.checks);
    plan.push(...(r.plan ?? []));
  }
}

console.log(
  `summary (${((performance.now() - t0) / 1000).toFixed(0)} s${quick ? ', --quick' : ''}; ratios are of medians against a baseline measured in the same run):`,
);
const width = Math.max(...summary.map((c) => c.name.length));
for (const c of summary) {
  const verdict = c.met === null ? 'info' : c.met ? 'met' : 'MISSED';
  console.log(`  ${c.name.padEnd(width)}  ${String(c.value).padEnd(34)} target ${String(c.target).padEnd(12)} ${verdict}`);
}
// The figures users plan with (docs/performance.md, "Planning"), each beside its same-run baseline.
if (plan.length > 0) {
  console.log(`\nplanning figures (this run${quick ? ', --quick' : ''}; medians; the baseline beside each was measured in the same run):`);
  const w = Math.max(...plan.map((p) => p.what.length));
  const v = Math.max(...plan.map((p) => String(p.value).length));
  for (const p of plan) console.log(`  ${p.what.padEnd(w)}  ${String(p.value).padEnd(v)}  baseline: ${p.baseline}`);
}
// A missed target is a finding, not a crash: the exit code says only whether every scenario ran.
process.exitCode = summary.some((c) => c.name.includes('failed (exit')) ? 1 : 0;
