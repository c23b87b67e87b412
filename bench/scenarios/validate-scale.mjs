// How `validate` scales with the size of the configuration.
//
//   node bench/scenarios/validate-scale.mjs [--quick] [--runs 5] [--sizes 1000,10000] [--keep] [--before DIR]
//
// --before DIR: also time the build in DIR (a checkout of an earlier version, `git worktree add
// --detach DIR <commit>`, with its dist/ built), alternating with this one run by run (current,
// before, before, current, …: which goes first alternates) so both see the same machine, and
// print before / current of the medians with the min–max of the same ratio run by run.
//
// (Build first: npx tsc -p tsconfig.json. There is no npm script for it on purpose.)
//
// Generates (bench/lib/generate-app.mjs) applications of 1,000 and 10,000 endpoints in a temp dir, each endpoint with
// parameters and three tasks (a JSON-body HttpRequest with an output, a dependent HttpRequest
// using it, an Email task with an attachment-static), in nested folders, with a static/ file and
// email-sending-configuration.xml. Then, several runs each, it times:
//   - the CLI: `node bin/endpoint-service.js validate FILE`, process start to exit;
//   - the compiler in-process from dist/: compileApplication(FILE, {mode: 'validate'}) with
//     diagnosticsOnly as the validate command calls it, and without (the AST kept, as serve
//     and dry-run need it);
//   - a baseline `node -e ""`, in the same run, so CLI figures can be read net of Node's start.
// It prints medians with min–max and the 10k/1k ratios, and a @@result line (lib/common.mjs,
// emitResult) with figures for information only: it asserts nothing, figures are for people.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { commandLine, numberOption, usageError } from '../lib/cli.mjs';
import { beforeBuild, beforeRatio, check, emitResult, median, repoRoot } from '../lib/common.mjs';
import { generate } from '../lib/generate-app.mjs';

const USAGE = `Usage: node bench/scenarios/validate-scale.mjs [--quick] [--runs N] [--sizes N,N,...] [--keep] [--before DIR]

How validate scales with the size of the configuration: generates applications of each size
in a temp dir and times the CLI, the compiler in-process and node -e "" as a baseline.

  --quick          fewer runs (3 instead of 5)
  --runs N         runs of each measurement
  --sizes N,N,...  endpoints of each generated application (default 1000,10000)
  --keep           keep the generated applications (their folder is printed)
  --before DIR     also time the build in DIR (a checkout with its dist/ built), run by run
                   beside this one, and report before/current of the medians
  -h, --help       this text
`;
const { values } = commandLine(USAGE, {
  quick: { type: 'boolean', default: false },
  runs: { type: 'string' },
  sizes: { type: 'string' },
  keep: { type: 'boolean', default: false },
  before: { type: 'string' },
});
const RUNS = numberOption(USAGE, values, 'runs', values.quick ? 3 : 5);
const SIZES = (values.sizes ?? '1000,10000').split(',').map(Number);
if (SIZES.some((n) => !Number.isInteger(n) || n < 1))
  usageError(USAGE, `--sizes must be whole numbers of endpoints separated by commas (got "${values.sizes}")`);
const KEEP = values.keep;
const BEFORE = values.before === undefined ? null : beforeBuild(USAGE, values.before);

/** A built checkout: its CLI and its compiler with the task kinds it registers. */
async function checkout(root, label) {
  const entry = path.join(root, 'dist/compiler/index.js');
  if (!existsSync(entry)) {
    console.error(
      `${path.relative(process.cwd(), entry) || entry} is missing: build first with \`npx tsc -p tsconfig.json\`${root === repoRoot ? '' : ' in that checkout'}.`,
    );
    process.exit(2);
  }
  const { compileApplication } = await import(entry);
  const { TASK_KINDS } = await import(path.join(root, 'dist/tasks/registry.js'));
  return {
    label,
    bin: path.join(root, 'bin/endpoint-service.js'),
    compile: (file, options) => compileApplication(file, { ...options, kinds: TASK_KINDS.list }),
  };
}

// ${env:CRM_TOKEN} is set for every run, so validate has nothing to warn about and prints one line.
const env = { ...process.env, CRM_TOKEN: 'bench-token', NO_COLOR: '1' };

// CPU time of the children, on Linux: a busy machine (other builds, tests) stretches wall time,
// while user+system time stays close to what the work costs. Elsewhere only wall time is shown.
const CLOCK_TICKS = (() => {
  if (process.platform !== 'linux') return null;
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  return Number(r.stdout) > 0 ? Number(r.stdout) : 100;
})();
function childrenCpuMs() {
  if (CLOCK_TICKS === null) return null;
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 of proc(5), cutime and cstime: waited-for children, in clock ticks.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS;
}

function timeProcess(argv) {
  const cpuBefore = childrenCpuMs();
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, argv, { env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const cpuAfter = childrenCpuMs();
  return { ms, cpu: cpuBefore === null ? null : cpuAfter - cpuBefore, r };
}

const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
const summary = (xs) => `median ${fmt(median(xs))} (min ${fmt(Math.min(...xs))}, max ${fmt(Math.max(...xs))})`;
const cpuSummary = (xs) => (xs.length > 0 && xs.every((x) => x !== null) ? `; CPU (user+sys) ${summary(xs)}` : '');

const builds = [await checkout(repoRoot, 'current')];
if (BEFORE !== null) builds.push(await checkout(BEFORE.root, `before (--before ${values.before})`));
/** The builds in the order of run `i`: with --before, which of the two goes first alternates. */
const inTurn = (i) => (i % 2 === 0 ? builds.map((build, b) => [build, b]) : builds.map((build, b) => [build, b]).reverse());
const root = mkdtempSync(path.join(tmpdir(), 'es-bench-validate-'));
const results = {};
const checks = [];
let baselineMs = NaN;
try {
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
  console.log(`node ${process.version}, ${cpus().length} CPUs, load average ${load()}, ${RUNS} runs each, apps in ${root}`);
  const baseline = [];
  const baselineCpu = [];
  for (let i = 0; i < RUNS; i++) {
    const t = timeProcess(['-e', '']);
    baseline.push(t.ms);
    baselineCpu.push(t.cpu);
  }
  console.log(`baseline node -e "": wall ${summary(baseline)}${cpuSummary(baselineCpu)}`);
  baselineMs = median(baseline);

  for (const count of SIZES) {
    const dir = path.join(root, String(count));
    mkdirSync(dir);
    const file = generate(dir, count);
    const size = statSync(file).size;

    const each = builds.map(() => ({ cli: [], cliCpu: [], compile: [], compileCpu: [], keep: [], keepCpu: [] }));
    let failed = false;
    for (let i = 0; i < RUNS && !failed; i++) {
      inTurn(i).forEach(([build, b]) => {
        if (failed) return;
        const { ms, cpu, r } = timeProcess([build.bin, 'validate', file]);
        if (r.status !== 0) {
          console.error(`${build.label}: validate exited ${r.status} for ${count} endpoints:\n${r.stdout.slice(0, 4000)}${r.stderr.slice(0, 4000)}`);
          process.exitCode = 1;
          failed = true;
          return;
        }
        each[b].cli.push(ms);
        each[b].cliCpu.push(cpu);
      });
    }
    // As validate compiles (diagnostics only, each endpoint let go), and as serve and dry-run do
    // (the whole application kept), alternating so all see the same machine.
    let diagnostics = 0;
    for (let i = 0; i < RUNS; i++) {
      inTurn(i).forEach(([build, b]) => {
        for (const diagnosticsOnly of [true, false]) {
          const cpuStart = process.cpuUsage();
          const start = process.hrtime.bigint();
          const result = build.compile(file, { mode: 'validate', env, diagnosticsOnly });
          (diagnosticsOnly ? each[b].compile : each[b].keep).push(Number(process.hrtime.bigint() - start) / 1e6);
          const cpu = process.cpuUsage(cpuStart);
          (diagnosticsOnly ? each[b].compileCpu : each[b].keepCpu).push((cpu.user + cpu.system) / 1000);
          diagnostics = result.diagnostics.length;
        }
      });
    }
    results[count] = each[0];
    console.log(
      `${String(count).padStart(6)} endpoints (${(size / 1024 / 1024).toFixed(1)} MB, ${count * 3} tasks, ${diagnostics} diagnostics), load average ${load()}:`,
    );
    builds.forEach((build, b) => {
      const { cli, cliCpu, compile, compileCpu, keep, keepCpu } = each[b];
      console.log(
        (builds.length > 1 ? `  ${build.label}:\n` : '') +
          `  CLI validate, process start to exit: wall ${cli.length ? summary(cli) : 'failed'}${cpuSummary(cliCpu)}\n` +
          `  compileApplication in-process, diagnostics only (as validate): wall ${summary(compile)}${cpuSummary(compileCpu)}\n` +
          `  compileApplication in-process, AST kept (as serve, dry-run):   wall ${summary(keep)}${cpuSummary(keepCpu)}`,
      );
    });
    if (failed) continue;
    checks.push(check(`validate (info) CLI, ${count} endpoints`, `${fmt(median(each[0].cli))} (node -e "" ${fmt(baselineMs)})`, 'information', null));
    if (builds.length > 1) {
      // before / current, each run's two figures taken one right after the other.
      const r = (k) => beforeRatio(each[1][k], each[0][k]);
      const cliCpu = CLOCK_TICKS === null ? '' : `   CPU ${r('cliCpu').text}`;
      console.log(
        `  before/current (medians; min–max of the runs):\n` +
          `    CLI validate                   wall ${r('cli').text}${cliCpu}\n` +
          `    in-process, diagnostics only   wall ${r('compile').text}   CPU ${r('compileCpu').text}\n` +
          `    in-process, AST kept           wall ${r('keep').text}   CPU ${r('keepCpu').text}`,
      );
      const cpu = CLOCK_TICKS === null ? '' : ` (CPU ${r('cliCpu').value.toFixed(2)}x)`;
      checks.push(check(`validate (info) CLI, ${count} endpoints, before/current`, `${r('cli').value.toFixed(2)}x${cpu}`, 'information', null));
    }
  }
  const [small, large] = SIZES;
  if (results[small]?.cli.length && results[large]?.cli.length) {
    const ratio = (k) => (median(results[large][k]) / median(results[small][k])).toFixed(1);
    const cpuRatios = CLOCK_TICKS === null ? '' : `; CPU: CLI ${ratio('cliCpu')}x, in-process ${ratio('compileCpu')}x`;
    console.log(
      `ratio ${large}/${small} of medians (endpoints ${(large / small).toFixed(0)}x): wall: CLI ${ratio('cli')}x, in-process ${ratio('compile')}x${cpuRatios}`,
    );
  }
} finally {
  if (KEEP) console.log(`kept ${root}`);
  else rmSync(root, { recursive: true, force: true });
}
emitResult('validate-scale', checks);
