// Regular expression engines for the author's regexes (a parameter's `pattern`, an output's
// `regex`), measured against each other: re2js (RE2 in plain JavaScript), re2-wasm (RE2 built
// to WebAssembly) and re2 (RE2 built as a native addon), with node's own RegExp, which
// backtracks, as the reference. Each engine checks a whole value, as the service does
// (`^(?:PATTERN)$`), for the patterns authors write and for the one that made RegExp backtrack
// for ever, on short values and on values of about 10 KB.
//
//   node bench/scenarios/regex-engines.mjs [--quick] [--rounds N] [--engines DIR]
//
// re2js is a dependency of the service; re2-wasm and re2 are not, so they are looked up in
// DIR/node_modules (`npm install --prefix DIR re2-wasm re2`; the native one compiles RE2 with
// node-gyp). An engine that cannot be loaded is reported as such and skipped. Asserts nothing:
// figures are for people (docs/performance.md, "Regular expressions in linear time").
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { commandLine, numberOption } from '../lib/cli.mjs';
import { repoRoot } from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/regex-engines.mjs [--quick] [--rounds N] [--engines DIR]

Whole-value matches per second of re2js, re2-wasm, the native re2 and node's RegExp, for
typical patterns and a pathological one, on short and ~10 KB values; also each engine's load
and compile time. Prints medians of the rounds; asserts nothing.

  --quick          fewer rounds and shorter rounds
  --rounds N       rounds per measurement (default 7, 3 with --quick)
  --engines DIR    where re2-wasm and re2 are installed (DIR/node_modules); default: this checkout
  -h, --help       this text
`;
const { values } = commandLine(USAGE, { quick: { type: 'boolean', default: false }, rounds: { type: 'string' }, engines: { type: 'string' } });
const QUICK = values.quick;
const ROUNDS = numberOption(USAGE, values, 'rounds', QUICK ? 3 : 7);
const ROUND_MS = QUICK ? 100 : 300;
const ENGINES_DIR = path.resolve(values.engines ?? repoRoot);

// -----------------------------------------------------------------------------------------
// The engines, each as "compile an anchored source" -> "test a value".

const requireFrom = (dir) => createRequire(path.join(dir, 'package.json'));
const ENGINES = [
  {
    name: 're2js',
    module: 're2js',
    dir: repoRoot,
    compile: (lib, source) => {
      const re = lib.RE2JS.compile(source);
      return (value) => re.testExact(value);
    },
  },
  {
    name: 're2-wasm',
    module: 're2-wasm',
    dir: ENGINES_DIR,
    compile: (lib, source) => {
      const re = new lib.RE2(`^(?:${source})$`, 'u');
      return (value) => re.test(value);
    },
  },
  {
    name: 're2 (native)',
    module: 're2',
    dir: ENGINES_DIR,
    compile: (lib, source) => {
      const re = new lib(`^(?:${source})$`, 'u');
      return (value) => re.test(value);
    },
  },
  {
    name: 'RegExp (backtracks)',
    module: null,
    dir: null,
    compile: (_lib, source) => {
      const re = new RegExp(`^(?:${source})$`, 'u');
      return (value) => re.test(value);
    },
  },
];

// -----------------------------------------------------------------------------------------
// What is matched. `backtracks`: RegExp takes exponential time on it, so RegExp runs only
// the short value of that case, and only on a length it finishes (its time doubles per 'a').

const EMAIL = '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}';
const ZIP = '[0-9]{5}';
const WORDS = '([A-Za-z]+ ?)*';
const long = (unit, bytes) => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
const CASES = [
  { pattern: EMAIL, label: 'email, short, matches', value: 'first.last+tag@example.co.uk' },
  { pattern: EMAIL, label: 'email, short, fails', value: 'first.last@example' },
  { pattern: EMAIL, label: 'email, 10 KB, matches', value: `${long('abcdefghij', 10_000)}@example.com` },
  { pattern: EMAIL, label: 'email, 10 KB, fails', value: long('abcdefghij', 10_000) },
  { pattern: EMAIL, label: 'email, 1 MB, fails', value: long('abcdefghij', 1_000_000) },
  { pattern: ZIP, label: 'zip, short, matches', value: '80331' },
  { pattern: ZIP, label: 'zip, short, fails', value: '8033a' },
  { pattern: ZIP, label: 'zip, 10 KB, fails', value: long('0123456789', 10_000) },
  { pattern: WORDS, label: 'words, short, matches', value: 'hello big world' },
  { pattern: WORDS, label: 'words, 41 chars a…a!', value: `${'a'.repeat(40)}!`, backtracks: true, regExpValue: `${'a'.repeat(20)}!` },
  { pattern: WORDS, label: 'words, 10 KB, matches', value: long('lorem ipsum ', 10_000) },
  { pattern: WORDS, label: 'words, 10 KB a…a!', value: `${'a'.repeat(10_000)}!`, backtracks: true },
  { pattern: WORDS, label: 'words, 1 MB a…a!', value: `${'a'.repeat(1_000_000)}!`, backtracks: true },
];

// -----------------------------------------------------------------------------------------

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Operations per second over one round of about ROUND_MS. */
function round(test, value) {
  let n = 0;
  let batch = 1;
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < ROUND_MS) {
    for (let i = 0; i < batch; i++) test(value);
    n += batch;
    batch = Math.min(batch * 2, 1 << 16);
    elapsed = performance.now() - started;
  }
  return (n / elapsed) * 1000;
}

/** Time to load the module in a fresh node, net of `node -e ""`, in ms (median of rounds). */
function loadMs(engine) {
  const time = (code) => {
    const t = process.hrtime.bigint();
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: engine.dir ?? repoRoot, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  const code = `import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module'; createRequire(${JSON.stringify(path.join(engine.dir, 'package.json'))})(${JSON.stringify(engine.module)});`;
  const net = [];
  for (let i = 0; i < ROUNDS; i++) net.push(time(code) - time(''));
  return median(net);
}

// Operations per second, and below 1,000 per second the time one takes: what a request waits.
const fmt = (opsPerSecond) => {
  if (opsPerSecond >= 1e6) return `${(opsPerSecond / 1e6).toFixed(2)} M/s`;
  if (opsPerSecond >= 1e3) return `${(opsPerSecond / 1e3).toFixed(1)} k/s`;
  return `${opsPerSecond.toFixed(1)} /s = ${(1000 / opsPerSecond).toFixed(1)} ms`;
};

console.log(
  `regex engines${QUICK ? ' (--quick)' : ''}: node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(`rounds ${ROUNDS} x ${ROUND_MS} ms; medians of operations per second (one whole-value test per operation)\n`);

const loaded = [];
for (const engine of ENGINES) {
  if (engine.module === null) {
    loaded.push({ engine, lib: null, version: process.version, loadMs: null });
    continue;
  }
  try {
    const require = requireFrom(engine.dir);
    const lib = require(engine.module);
    // Read as a file: a package's "exports" may not list its package.json.
    const version = JSON.parse(readFileSync(path.join(engine.dir, 'node_modules', engine.module, 'package.json'), 'utf8')).version;
    loaded.push({ engine, lib, version, loadMs: loadMs(engine) });
  } catch (error) {
    console.log(`${engine.name}: not measured, it cannot be loaded from ${engine.dir} (${String(error.message).split('\n')[0]})`);
  }
}
console.log('');

// Load and compile: what a start-up pays (compile per distinct pattern, median of rounds).
console.log('engine'.padEnd(22), 'version'.padEnd(10), 'load ms'.padStart(8), '  compile µs (email / zip / words)');
for (const { engine, lib, version, loadMs: ms } of loaded) {
  const compileUs = [EMAIL, ZIP, WORDS].map((source) => {
    const xs = [];
    for (let i = 0; i < ROUNDS; i++) {
      const t = performance.now();
      for (let j = 0; j < 100; j++) engine.compile(lib, source);
      xs.push(((performance.now() - t) / 100) * 1000);
    }
    return median(xs).toFixed(1);
  });
  console.log(engine.name.padEnd(22), String(version).padEnd(10), (ms === null ? '-' : ms.toFixed(1)).padStart(8), ' ', compileUs.join(' / '));
}
console.log('');

const width = Math.max(...CASES.map((c) => c.label.length)) + 2;
console.log('case'.padEnd(width) + loaded.map(({ engine }) => engine.name.padStart(24)).join(''));
for (const c of CASES) {
  let line = c.label.padEnd(width);
  let verdicts = new Set();
  for (const { engine, lib } of loaded) {
    let value = c.value;
    if (engine.module === null && c.backtracks) {
      if (c.regExpValue === undefined) {
        line += 'never ends'.padStart(24);
        continue;
      }
      value = c.regExpValue;
    }
    const test = engine.compile(lib, c.pattern);
    if (value === c.value) verdicts.add(test(value));
    const xs = [];
    for (let i = 0; i < ROUNDS; i++) xs.push(round(test, value));
    line += `${value === c.value ? '' : `(${value.length} chars) `}${fmt(median(xs))}`.padStart(24);
  }
  // Every engine must give the same verdict, or the figures compare different work.
  if (verdicts.size > 1) line += '  ENGINES DISAGREE';
  console.log(line);
}
