// Shared by the bench scenarios: starting pinned processes, running the load generator
// (autocannon, or wrk where a scenario offers --driver) in a child, sampling /proc, statistics
// and the report format the runner (run.mjs) summarises.
//
// Why processes and pinning: the machine has 2 cores. The server under test gets core 0, the
// load generator (and whatever helps it: upstreams, the SMTP sink) core 1, so a server is
// never measured while it competes with its own load generator for a core. Every scenario
// measures the real binary and its baseline alternately in the same run (A B A B ...), so
// both see the same machine state, and reports medians with min–max and ratios of medians.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandLine, numberOption, usageError } from './cli.mjs';

export const benchDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const repoRoot = path.resolve(benchDir, '..');
// bench/README.md: what is measured, what it is measured against, and what only takes part.
export const scenariosDir = path.join(benchDir, 'scenarios');
export const baselinesDir = path.join(benchDir, 'baselines');
export const peersDir = path.join(benchDir, 'peers');
/** The endpoints.xml a scenario serves: bench/scenarios/fixtures/NAME/endpoints.xml. */
export const fixture = (name) => path.join(scenariosDir, 'fixtures', name, 'endpoints.xml');
export const bin = path.join(repoRoot, 'bin/endpoint-service.js');
const autocannonCli = path.join(repoRoot, 'node_modules/autocannon/autocannon.js');

export const SERVER_CPU = '0';
export const LOAD_CPU = '1';
const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

export function requireBuild() {
  if (!existsSync(path.join(repoRoot, 'dist/cli/main.js'))) {
    console.error('dist/ is missing: build first with `npx tsc -p tsconfig.json`.');
    process.exit(2);
  }
}

/**
 * --quick and the scenario's own numeric options (each with a full and a quick default), plus
 * any parseArgs options in `extra` (returned as parsed);
 * --help prints `usage` and exits, an unknown option or a bad number is a usage error (lib/cli.mjs).
 */
export function options(usage, defaults, extra = {}) {
  const spec = { quick: { type: 'boolean', default: false }, ...extra };
  for (const name of Object.keys(defaults)) spec[name] = { type: 'string' };
  const { values } = commandLine(usage, spec);
  const out = { quick: values.quick };
  // Options of other types (parseArgs specs in `extra`) as parsed.
  for (const name of Object.keys(extra)) out[name] = values[name];
  for (const [name, [full, quick]] of Object.entries(defaults)) out[name] = numberOption(usage, values, name, values.quick ? quick : full);
  return out;
}

/** argv prefixed with taskset when a core is asked for and taskset works; cpu null = unpinned. */
export function pinned(cpu, argv) {
  return cpu !== null && hasTaskset ? ['taskset', '-c', cpu, ...argv] : argv;
}

/**
 * Starts a long-running process and resolves once a stdout line matches `ready` (its first
 * group, if any, is returned as `url`). stderr goes to /dev/null unless `stderr` says
 * otherwise: the service logs a line per request, and draining a pipe would cost this
 * process CPU on a core that belongs to the load generator.
 */
export function startProcess(argv, { cpu = SERVER_CPU, env = process.env, ready = /^(http\S+)$/m, stderr = 'ignore', ipc = false, timeoutMs = 60_000 } = {}) {
  const full = pinned(cpu, argv);
  const started = process.hrtime.bigint();
  const child = spawn(full[0], full.slice(1), { env, stdio: ['ignore', 'pipe', stderr, ...(ipc ? ['ipc'] : [])] });
  // With stderr 'pipe' (scenarios without load), the last lines are kept for a failure message.
  let errTail = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk) => (errTail = (errTail + chunk).slice(-4000)));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${argv.join(' ')}: not ready within ${timeoutMs} ms`));
    }, timeoutMs);
    const onExit = (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(`${argv.join(' ')} exited (${code ?? signal}) before it was ready; stdout: ${out.slice(0, 2000)}${errTail ? `\nstderr: ${errTail}` : ''}`),
      );
    };
    child.once('exit', onExit);
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      if (out === null) return;
      out += chunk;
      const match = ready.exec(out);
      if (!match) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      const readyMs = Number(process.hrtime.bigint() - started) / 1e6;
      // CPU the process used to get ready: steadier than wall time on a shared machine.
      let cpuAtReady = NaN;
      try {
        cpuAtReady = cpuSeconds(child.pid);
      } catch {
        /* exited meanwhile */
      }
      out = null;
      const exited = new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
      resolve({
        child,
        pid: child.pid,
        url: match[1],
        readyMs,
        cpuAtReady,
        exited,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(killer);
        },
      });
    });
  });
}

/**
 * `endpoint-service serve FILE --port 0 --workers N` (plus extra args), ready on its ready line.
 * `cli`: another build's bin/endpoint-service.js (--before), this one's by default.
 */
export function startService(app, { workers = 1, cpu = SERVER_CPU, env = process.env, extra = [], stderr = 'ignore', cli = bin } = {}) {
  // The delivery log's embedded store in a folder of its own, never the clone's .endpoint-service/.
  const stateDir = env.ENDPOINT_SERVICE_STATE_DIR ?? mkdtempSync(path.join(os.tmpdir(), 'es-bench-state-'));
  return startProcess([process.execPath, cli, 'serve', app, '--port', '0', '--workers', String(workers), '--log-format', 'json', ...extra], {
    cpu,
    env: { ...env, ENDPOINT_SERVICE_STATE_DIR: stateDir },
    stderr,
    ready: /^endpoint-service listening on (\S+)$/m,
  });
}

/**
 * A script of bench/baselines/ or bench/peers/ that prints its URL (or port) as its first stdout
 * line; `script` is its path under bench/ ('peers/upstream.mjs').
 */
export function startScript(script, args = [], opts = {}) {
  return startProcess([process.execPath, path.join(benchDir, script), ...args], opts);
}

/**
 * The load generators a scenario can offer with --driver. autocannon is the default because it
 * is an npm package (a devDependency); wrk is a system program, not always installed, and
 * generates more load from one core than autocannon does, so the server rather than the load
 * generator is more likely to be what limits req/s.
 */
export const DRIVERS = ['autocannon', 'wrk'];

/** A usage error for an unknown driver; exits 2 with a clear message when wrk is asked for but not on PATH. */
export function checkDriver(usage, driver) {
  if (!DRIVERS.includes(driver)) usageError(usage, `--driver must be one of ${DRIVERS.join(', ')} (got "${driver}")`);
  if (driver === 'wrk' && spawnSync('wrk', ['-v']).error?.code === 'ENOENT') {
    process.stderr.write(
      `${path.basename(process.argv[1] ?? 'bench')}: --driver wrk: wrk is not on PATH; install it (e.g. apt-get install wrk) or use --driver autocannon\n`,
    );
    process.exit(2);
  }
}

/**
 * A load test by the chosen driver in a child process on the load core, so it never shares an
 * event loop or a core with the server under test. Both drivers resolve to the same fields
 * (latencies in ms). Throws on errors or non-2xx answers: a fast failure is not a result.
 */
export function loadTest(url, { driver = 'autocannon', ...opts } = {}) {
  if (driver === 'wrk') return wrkTest(url, opts);
  return autocannonTest(url, opts);
}

/**
 * `bodyFile`: every request's body, read from that file; `headers`: extra request headers, { name: value };
 * `idReplacement`: every `[<id>]` in the URL becomes a new id per request (lib/autocannon-ids.mjs).
 */
function autocannonTest(
  url,
  { connections = 10, duration = 5, cpu = LOAD_CPU, method = 'GET', allowNon2xx = false, bodyFile, headers = {}, idReplacement = false } = {},
) {
  if (idReplacement && (bodyFile !== undefined || Object.keys(headers).length > 0)) throw new Error('autocannon: idReplacement takes no body or headers');
  const extra = [...(bodyFile !== undefined ? ['-i', bodyFile] : []), ...Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}=${value}`])];
  const argv = pinned(
    cpu,
    idReplacement
      ? [process.execPath, path.join(benchDir, 'lib/autocannon-ids.mjs'), url, String(connections), String(duration), method]
      : [process.execPath, autocannonCli, '-c', String(connections), '-d', String(duration), '-m', method, ...extra, '-n', '--json', url],
  );
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (err += c));
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}: ${err.slice(0, 2000)}`));
      let r;
      try {
        r = JSON.parse(out);
      } catch {
        return reject(new Error(`autocannon printed no JSON: ${out.slice(0, 500)} ${err.slice(0, 500)}`));
      }
      if (r.errors > 0 || r.timeouts > 0 || (!allowNon2xx && r.non2xx > 0)) {
        return reject(new Error(`${url}: ${r.non2xx} non-2xx answers, ${r.errors} errors, ${r.timeouts} timeouts`));
      }
      resolve({
        rps: r.requests.average,
        total: r['2xx'],
        p50: r.latency.p50,
        p99: r.latency.p99,
        mean: r.latency.average,
        max: r.latency.max,
        start: Date.parse(r.start),
        finish: Date.parse(r.finish),
      });
    });
  });
}

/**
 * `wrk -t1 -c<connections> -d<duration>s --latency URL`: one thread, as the load core is one
 * core. GET only (other methods need a Lua script). Its --latency output is parsed for req/s,
 * the percentiles and the error counts; wrk reports a status >= 400 as "Non-2xx or 3xx".
 */
function wrkTest(url, { connections = 10, duration = 5, cpu = LOAD_CPU, method = 'GET', allowNon2xx = false, bodyFile } = {}) {
  if (method !== 'GET' || bodyFile !== undefined) throw new Error(`wrk driver: only GET without a body is supported (asked for ${method})`);
  const argv = pinned(cpu, ['wrk', '-t1', `-c${connections}`, `-d${duration}s`, '--latency', url]);
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (err += c));
    child.once('error', reject);
    child.once('exit', (code) => {
      const finish = Date.now();
      if (code !== 0) return reject(new Error(`wrk exited ${code}: ${err.slice(0, 2000)} ${out.slice(0, 500)}`));
      let r;
      try {
        r = parseWrk(out);
      } catch (error) {
        return reject(new Error(`${error.message}; wrk printed: ${out.slice(0, 1000)}`));
      }
      if (r.socketErrors > 0 || (!allowNon2xx && r.non2xx > 0)) {
        return reject(new Error(`${url}: ${r.non2xx} non-2xx answers, ${r.socketErrors} socket errors (${r.socketErrorText})`));
      }
      resolve({ rps: r.rps, total: r.requests - r.non2xx, p50: r.p50, p99: r.p99, mean: r.mean, max: r.max, start, finish });
    });
  });
}

const WRK_UNIT_MS = { us: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };

/** The figures of `wrk --latency` output; latencies in ms. Exported for its test. */
export function parseWrk(text) {
  const time = (re, what) => {
    const m = re.exec(text);
    if (!m || !(m[2] in WRK_UNIT_MS)) throw new Error(`wrk output without ${what}`);
    return Number(m[1]) * WRK_UNIT_MS[m[2]];
  };
  const number = (re, what, fallback) => {
    const m = re.exec(text);
    if (m) return Number(m[1]);
    if (fallback === undefined) throw new Error(`wrk output without ${what}`);
    return fallback;
  };
  const socket = /Socket errors: (connect (\d+), read (\d+), write (\d+), timeout (\d+))/.exec(text);
  return {
    rps: number(/^Requests\/sec:\s+([\d.]+)/m, 'Requests/sec'),
    requests: number(/^\s*(\d+) requests in /m, 'the request count'),
    // Printed only when there were some.
    non2xx: number(/Non-2xx or 3xx responses: (\d+)/, '', 0),
    socketErrors: socket ? socket.slice(2, 6).reduce((sum, n) => sum + Number(n), 0) : 0,
    socketErrorText: socket ? socket[1] : '',
    mean: time(/^\s*Latency\s+([\d.]+)(\w+)/m, 'the mean latency'),
    max: time(/^\s*Latency\s+\S+\s+\S+\s+([\d.]+)(\w+)/m, 'the max latency'),
    p50: time(/^\s*50%\s+([\d.]+)(\w+)/m, 'p50 (was --latency given?)'),
    p99: time(/^\s*99%\s+([\d.]+)(\w+)/m, 'p99 (was --latency given?)'),
  };
}

/** utime + stime of a process in seconds (USER_HZ is 100 on Linux). */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * utime + stime of each thread of a process in seconds, by the thread's name: `main` for the
 * thread that runs the event loop, else what the kernel calls it (`WorkerThread` for a
 * worker_threads thread, `V8Worker` for V8's garbage collection helpers, `libuv-worker`). Threads
 * that ended are not counted: compare only threads that live through the measurement.
 */
export function threadCpuSeconds(pid) {
  const out = {};
  let tasks = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const name = tid === String(pid) ? 'main' : readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      out[name] = (out[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** Resident set size in MiB, from /proc/PID/status. */
export function rssMiB(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/**
 * A load test that also reports the server's CPU time per request: a steadier figure than
 * req/s on a noisy machine, and it shows whether the server (not the load generator) was
 * the bottleneck (cpuPct near 100 for one process on one core).
 */
export async function measureServer(server, url, load) {
  const cpu0 = cpuSeconds(server.pid);
  const threads0 = threadCpuSeconds(server.pid);
  const t0 = performance.now();
  const r = await loadTest(url, load);
  const wall = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(server.pid) - cpu0;
  const threads1 = threadCpuSeconds(server.pid);
  /** CPU per request of each kind of thread (threadCpuSeconds), in µs. */
  const threadUsPerReq = {};
  for (const [name, seconds] of Object.entries(threads1)) threadUsPerReq[name] = r.total > 0 ? ((seconds - (threads0[name] ?? 0)) * 1e6) / r.total : NaN;
  return { ...r, cpuPct: (100 * cpu) / wall, cpuUsPerReq: r.total > 0 ? (cpu * 1e6) / r.total : NaN, threadUsPerReq };
}

export const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** "median (min–max)" with a fixed number of decimals. */
export function spread(xs, decimals = 0, unit = '') {
  const f = (x) => x.toFixed(decimals) + unit;
  return `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;
}

/** What the kernel's thread names are in serve. */
const THREAD_NAMES = { main: 'requests (main)', WorkerThread: 'log writer', V8Worker: 'garbage collection' };

/** serve's CPU µs per request by thread, medians of measureServer's `samples`, those of at least `least` µs: "requests (main) 18.9, log writer 6.5". */
export function threadBreakdown(samples, least) {
  const names = [...new Set(samples.flatMap((x) => Object.keys(x.threadUsPerReq ?? {})))];
  return names
    .map((n) => [n, median(samples.map((x) => x.threadUsPerReq?.[n] ?? 0))])
    .filter(([, us]) => us >= least)
    .map(([n, us]) => `${THREAD_NAMES[n] ?? n} ${us.toFixed(1)}`)
    .join(', ');
}

/** One variant's line of a report: req/s, p50, p99 and the server's CPU per request, each as median (min–max) of `samples`. */
export function variantLine(name, width, samples) {
  const of = (key, decimals = 0, unit = '') =>
    spread(
      samples.map((x) => x[key]),
      decimals,
      unit,
    );
  return `  ${name.padEnd(width)} req/s ${of('rps')}   p50 ${of('p50', 1, ' ms')}   p99 ${of('p99', 1, ' ms')}   server CPU ${of('cpuUsPerReq', 1)} µs/req`;
}

export function warmup(url, connections = 10, driver = 'autocannon') {
  return loadTest(url, { connections, duration: 2, driver });
}

/**
 * The machine-readable outcome of a scenario: one line the runner picks up for its summary.
 * Each check: { name, value, target, met } with value and target as display text.
 */
export function emitResult(scenario, checks, extra = {}) {
  process.stdout.write(`@@result ${JSON.stringify({ scenario, checks, ...extra })}\n`);
}

export function check(name, value, target, met) {
  return { name, value, target, met };
}

/**
 * A row of the planning table the runner prints at the end (docs/performance.md opens with it):
 * what a user plans with, this run's figure, and the baseline measured beside it in the same run.
 */
export function planRow(what, value, baseline) {
  return { what, value, baseline };
}

export const ratio = (a, b) => a / b;

/**
 * The build `--before DIR` names: a checkout of an earlier version (`git worktree add --detach
 * DIR COMMIT`) with its own dist/ built. A usage error, before anything starts, when DIR holds
 * no built CLI: a run of minutes must not end in a missing file.
 */
export function beforeBuild(usage, dir) {
  const root = path.resolve(dir);
  const cli = path.join(root, 'bin/endpoint-service.js');
  if (!existsSync(cli) || !existsSync(path.join(root, 'dist/cli/main.js'))) {
    usageError(usage, `--before ${dir}: no built endpoint-service there (DIR/bin/endpoint-service.js and DIR/dist/; run npx tsc -p tsconfig.json in DIR)`);
  }
  return { root, bin: cli };
}

/**
 * An earlier build against this one: median before / median current, and the same ratio round
 * by round (each round measures both, one right after the other), whose min–max shows how far
 * the machine moved the figure. For times, above 1x means this build takes less.
 */
export function beforeRatio(before, current) {
  const value = median(before) / median(current);
  const rounds = before.map((b, i) => b / current[i]).filter((r) => Number.isFinite(r));
  const range = rounds.length > 0 ? ` (rounds ${Math.min(...rounds).toFixed(2)}–${Math.max(...rounds).toFixed(2)}x)` : '';
  return { value, text: `${value.toFixed(2)}x${range}` };
}

/**
 * A latency ratio a / b as text. autocannon reports whole milliseconds, so at low load both
 * p99s are often 0 ms: that is equal at the tool's resolution, not "NaNx".
 */
export function latencyRatio(a, b) {
  if (a === 0 && b === 0) return { value: 1, text: '1.00x (both 0 ms at 1 ms resolution)' };
  // A baseline under the 1 ms resolution (0 ms) has no ratio: 1 ms against it may be anything from 1x up.
  if (b === 0) return { value: null, text: `${a} ms against under 1 ms (not measurable at 1 ms resolution)` };
  const value = a / b;
  return { value, text: `${value.toFixed(2)}x` };
}
