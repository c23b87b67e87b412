// P10: the memory a served application keeps. The generated 10,000-endpoint application
// (lib/generate-app.mjs) is compiled as serve compiles it, and the V8 heap in use is read after
// a full garbage collection: before compiling, after compiling, and after one request to each
// endpoint through the same request pipeline serve runs (its tasks fail before connecting: no
// HTTP host is allowed and the SMTP port refuses, so nothing leaves the machine). Target: the
// application <= 50 MB at both points. For comparison, `--before DIR` measures another built
// checkout in the same run.
//
//   node bench/scenarios/p10-memory.mjs [--quick] [--endpoints N] [--before DIR]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { check, emitResult, options, planRow, repoRoot, requireBuild } from '../lib/common.mjs';
import { generate } from '../lib/generate-app.mjs';

const USAGE = `Usage: node bench/scenarios/p10-memory.mjs [--quick] [--endpoints N] [--before DIR]

P10: V8 heap in use by the compiled application of a generated large application, after the
compile and after one request to each endpoint. Target: <= 50 MB at both points, for 10,000
endpoints (other sizes, --quick included, are for information).

  --quick          fewer endpoints (1,000 instead of 10,000)
  --endpoints N    endpoints of the generated application
  --before DIR     also measure the build in DIR (a checkout with dist/), in the same run
  -h, --help       this text
`;

// The measurement itself runs in a child with --expose-gc: a heap figure means something only
// right after a full collection.
if (process.argv[2] === '--probe') {
  const [, , , root, file, count] = process.argv;
  const load = (p) => import(pathToFileURL(path.join(root, 'dist', p)).href);
  const { compileApplication } = await load('compiler/index.js');
  const { TASK_KINDS } = await load('tasks/registry.js');
  const { LoadedApplication } = await load('runtime/loaded.js');
  const { runRequest } = await load('runtime/pipeline.js');
  const { RequestUploads } = await load('upload.js');
  const { DEFAULT_TASK_SETTINGS } = await load('tasks/settings.js');
  const env = { ...process.env, CRM_TOKEN: 'bench-token' };
  // Every task must end at the host check, before a name is looked up: a lookup of the generated
  // hosts goes to the machine's resolver, which can take seconds per request when it is slow.
  // A probe whose settings drifted from what LoadedApplication reads would wait on it unseen,
  // so any other failure stops the probe.
  const refusedBeforeConnecting = /is not allowed: --allow-task-host permits only/;
  const wrongEnds = [];
  const heap = () => {
    globalThis.gc();
    globalThis.gc();
    return process.memoryUsage().heapUsed;
  };
  const base = heap();
  const result = compileApplication(file, { mode: 'serve', kinds: TASK_KINDS.list, env, smtpUrlGiven: true });
  if (result.application === null || result.errorCount > 0) throw new Error(`the generated application does not compile (${result.errorCount} errors)`);
  const compiled = heap() - base;
  const loaded = new LoadedApplication(result.application, {
    env,
    observer: {
      taskFinished(event) {
        if (event.outcome === 'failed' && !refusedBeforeConnecting.test(event.error ?? '')) wrongEnds.push(event.error);
      },
      warn() {},
    },
    upstreamTimeoutMs: 5000,
    kinds: TASK_KINDS,
    taskSettings: {
      ...DEFAULT_TASK_SETTINGS,
      'http-request': { ...DEFAULT_TASK_SETTINGS['http-request'], allowedHosts: ['127.0.0.1'] },
      email: { smtpUrl: 'smtp://127.0.0.1:9' },
    },
  });
  const endpoints = result.application.endpoints;
  for (let i = 0; i < endpoints.length; i++) {
    await runRequest(loaded, {
      endpoint: endpoints[i],
      raw: new Map([
        ['customer-name', [`Customer ${i}`]],
        ['email', [`customer${i}@example.com`]],
      ]),
      uploads: RequestUploads.NONE,
      info: { requestId: `p10-${i}`, clientIp: '127.0.0.1', userAgent: 'bench', baseUrl: 'http://127.0.0.1' },
    });
    if (i % 500 === 499) await loaded.tasksSettled();
  }
  await loaded.tasksSettled();
  if (wrongEnds.length > 0) throw new Error(`${wrongEnds.length} tasks failed other than at the host check, such as: ${wrongEnds[0]}`);
  const served = heap() - base;
  process.stdout.write(JSON.stringify({ endpoints: Number(count), compiled, served }) + '\n');
  process.exit(0);
}

const o = options(USAGE, { endpoints: [10_000, 1_000] }, { before: { type: 'string' } });
requireBuild();
const root = mkdtempSync(path.join(tmpdir(), 'es-bench-memory-'));
const file = generate(path.join(root, 'app'), o.endpoints);
const probe = (checkout) => {
  const r = spawnSync(process.execPath, ['--expose-gc', process.argv[1], '--probe', checkout, file, String(o.endpoints)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the probe of ${checkout} failed: ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout);
};
let now, before;
try {
  now = probe(repoRoot);
  if (o.before !== undefined) before = probe(path.resolve(o.before));
} finally {
  rmSync(root, { recursive: true, force: true });
}

const mb = (bytes) => (bytes / 1e6).toFixed(1);
const perEndpoint = (bytes) => (bytes / o.endpoints / 1024).toFixed(2) + ' KiB';
console.log(`P10 heap in use by the compiled application, ${o.endpoints} generated endpoints (3 tasks each), after a full GC`);
console.log(`  after compile                      ${mb(now.compiled)} MB (${perEndpoint(now.compiled)} per endpoint)`);
console.log(`  after one request to each endpoint ${mb(now.served)} MB`);
if (before) console.log(`  --before ${o.before}: after compile ${mb(before.compiled)} MB, after the requests ${mb(before.served)} MB`);
// The target is for the 10,000-endpoint application; other sizes are reported for information
// (the request path's own libraries, about 3 MB, do not scale with the application).
const LIMIT = 50e6;
const judged = o.endpoints === 10_000;
const verdict = (bytes) => (judged ? bytes <= LIMIT : null);
const target = judged ? '<= 50.0 MB' : 'information (target at 10,000)';
emitResult(
  'p10',
  [
    check(`P10 application heap after compile (${o.endpoints} endpoints)`, `${mb(now.compiled)} MB`, target, verdict(now.compiled)),
    check(`P10 application heap after ${o.endpoints} requests`, `${mb(now.served)} MB`, target, verdict(now.served)),
  ],
  {
    plan: [
      planRow(
        'memory per 1,000 endpoints (V8 heap of the compiled application, 3 tasks each)',
        `${(((now.served / o.endpoints) * 1000) / 1e6).toFixed(1)} MB`,
        `measured with ${o.endpoints} endpoints, after one request to each; no baseline`,
      ),
    ],
  },
);
