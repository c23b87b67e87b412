// P13: a webhook delivery (GitHub's `issues.opened` example from @octokit/webhooks-examples,
// pretty-printed as GitHub sends it: about 21 KB) posted to an endpoint whose five parameters are
// JSONPath expressions into the body, against the same delivery posted to an endpoint that reads
// the same five values from the query string, same run. Both have one HttpRequest task to a local
// upstream. What is measured is the cost of binding from JSON: the body is parsed once per
// request however many parameters read it. Target: >= 0.80x the query-string endpoint's req/s.
//
//   node bench/scenarios/p13-webhook.mjs [--quick] [--rounds N] [--duration S] [--connections C]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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
  startScript,
  startService,
  loadTest,
  variantLine,
} from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/p13-webhook.mjs [--quick] [--rounds N] [--duration S] [--connections C]

P13: a 21 KB GitHub delivery posted to an endpoint with five JSONPath parameters and one
HttpRequest task, against the same delivery posted to the same endpoint reading its five values
from the query string. Target: req/s >= 0.80x.

  --quick          shorter run (2 rounds x 4 s instead of 4 x 8 s)
  --rounds N       rounds per variant
  --duration S     seconds of load per round
  --connections C  autocannon connections (default 10)
  -h, --help       this text
`;
const o = options(USAGE, { rounds: [4, 2], duration: [8, 4], connections: [10, 10] });
requireBuild();

const examples = createRequire(import.meta.url)('@octokit/webhooks-examples');
// The largest of the `issues.opened` examples: an issue with its labels, milestone and performed_via_github_app.
const [delivery, body] = (examples.default ?? examples)
  .find((e) => e.name === 'issues')
  .examples.filter((x) => x.action === 'opened')
  .map((x) => [x, JSON.stringify(x, null, 2)])
  .reduce((a, b) => (b[1].length > a[1].length ? b : a));
const dir = mkdtempSync(path.join(os.tmpdir(), 'p13-'));
const bodyFile = path.join(dir, 'issues-opened.json');
writeFileSync(bodyFile, body);
const query = new URLSearchParams({
  a: delivery.action,
  n: String(delivery.issue.number),
  t: delivery.issue.title,
  r: delivery.repository.full_name,
  s: delivery.sender.login,
});

const upstream = await startScript('peers/upstream.mjs', [], { cpu: LOAD_CPU });
const service = await startService(fixture('p13-webhook'), { env: { ...process.env, UPSTREAM: upstream.url } });
const load = { method: 'POST', bodyFile, headers: { 'content-type': 'application/json', 'x-github-event': 'issues' }, connections: o.connections };
const variants = [
  { name: 'query string', url: `${service.url}/query?${query}`, samples: [] },
  { name: 'JSONPath', url: `${service.url}/jsonpath`, samples: [] },
];
try {
  for (const v of variants) await loadTest(v.url, { ...load, duration: 2 });
  for (let round = 0; round < o.rounds; round++) {
    for (const v of variants) v.samples.push(await measureServer(service, v.url, { ...load, duration: o.duration }));
  }
} finally {
  await Promise.all([service.stop(), upstream.stop()]);
  rmSync(dir, { recursive: true, force: true });
}

console.log(
  `P13 POST of a ${(body.length / 1024).toFixed(1)} KiB delivery: ${o.connections} connections, ${o.rounds} rounds x ${o.duration} s per variant, alternating`,
);
for (const v of variants) console.log(variantLine(v.name, 14, v.samples));
const [byQuery, byPath] = variants.map((v) => v.samples);
const rps = median(byPath.map((x) => x.rps)) / median(byQuery.map((x) => x.rps));
const cpu = median(byPath.map((x) => x.cpuUsPerReq)) / median(byQuery.map((x) => x.cpuUsPerReq));
console.log(`  ratio JSONPath/query string (of medians): req/s ${rps.toFixed(2)}x, CPU per request ${cpu.toFixed(2)}x`);
emitResult('p13', [check('P13 five JSONPath parameters vs query string', `${rps.toFixed(3)}x`, '>= 0.80x', rps >= 0.8)]);
