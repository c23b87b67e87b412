// P14: a signed 20 KB webhook delivery (GitHub's X-Hub-Signature-256, verified over the raw body
// before the parameters; and a signature described with the template: a timestamp header, a
// prefix and "{timestamp}.{body}") against the same delivery to the same endpoint without
// <signature>, in one service (--workers 1), measured alternately. All bind one value from the
// JSON body with a JSONPath and answer 200 at once, so the difference is the verification: one
// HMAC-SHA256 over 20 KB and the header lookups. Target: >= 0.90x req/s for each.
//
//   node bench/scenarios/p14-signature.mjs [--quick] [--rounds N] [--duration S] [--connections C] [--size BYTES]
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { check, emitResult, fixture, latencyRatio, measureServer, median, options, requireBuild, startService, variantLine } from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/p14-signature.mjs [--quick] [--rounds N] [--duration S] [--connections C] [--size BYTES]

P14: a signed JSON delivery of about 20 KB posted to an endpoint with <signature scheme="github">,
to one with a template signature (scheme="hmac" with timestamp-header, prefix and signed), and to
the same endpoint without either, in one endpoint-service (--workers 1), measured alternately.
Target: req/s >= 0.90x the unsigned endpoint's, for each.

  --quick          shorter run (3 rounds x 4 s instead of 5 x 10 s)
  --rounds N       rounds per variant
  --duration S     seconds of load per round
  --connections C  connections of autocannon (default 10)
  --size BYTES     the delivery's size (default 20480)
  -h, --help       this text
`;
const o = options(USAGE, { rounds: [5, 3], duration: [10, 4], connections: [10, 10], size: [20480, 20480] });
requireBuild();

const SECRET = 'p14-webhook-secret';
// A delivery shaped like GitHub's: nested objects, padded to the size asked for.
const base = { action: 'opened', repository: { full_name: 'octo/bench' }, issue: { number: 11, title: 'P14', body: '' } };
base.issue.body = 'x'.repeat(Math.max(0, o.size - JSON.stringify(base).length));
const body = Buffer.from(JSON.stringify(base));
const signature = 'sha256=' + createHmac('sha256', SECRET).update(body).digest('hex');
// Signed once, at the start: the endpoint's tolerance (1h) outlasts the run.
const timestamp = String(Math.floor(Date.now() / 1000));
const templateSignature = 'v1=' + createHmac('sha256', SECRET).update(`${timestamp}.`).update(body).digest('hex');
const dir = mkdtempSync(path.join(os.tmpdir(), 'p14-'));
const input = path.join(dir, 'delivery.json');
writeFileSync(input, body);

const service = await startService(fixture('p14-signature'), { env: { ...process.env, P14_SECRET: SECRET } });
const load = {
  method: 'POST',
  bodyFile: input,
  headers: {
    'content-type': 'application/json',
    'x-hub-signature-256': signature,
    'x-bench-signature': templateSignature,
    'x-bench-timestamp': timestamp,
  },
  connections: o.connections,
  duration: o.duration,
};
const variants = [
  { name: 'unsigned', url: `${service.url}/unsigned`, samples: [] },
  { name: 'signed', url: `${service.url}/signed`, samples: [] },
  { name: 'template', url: `${service.url}/template`, samples: [] },
];
try {
  for (const v of variants) await measureServer(service, v.url, { ...load, duration: 2 });
  for (let round = 0; round < o.rounds; round++) {
    for (const v of variants) v.samples.push(await measureServer(service, v.url, load));
  }
} finally {
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
}

console.log(
  `P14 POST of a ${body.length}-byte JSON delivery: ${o.connections} connections, ${o.rounds} rounds x ${o.duration} s per variant, alternating; server on core 0, autocannon on core 1`,
);
for (const v of variants) console.log(variantLine(v.name, 10, v.samples));
const [unsigned, signed, template] = variants.map((v) => v.samples);
const m = (xs, key) => median(xs.map((x) => x[key]));
const ratios = (xs) => ({
  rps: m(xs, 'rps') / m(unsigned, 'rps'),
  p99: latencyRatio(m(xs, 'p99'), m(unsigned, 'p99')),
  cpu: m(xs, 'cpuUsPerReq') / m(unsigned, 'cpuUsPerReq'),
});
const github = ratios(signed);
const templated = ratios(template);
for (const [name, r] of [
  ['signed', github],
  ['template', templated],
])
  console.log(`  ratio ${name}/unsigned (of medians): req/s ${r.rps.toFixed(2)}x, p99 ${r.p99.text}, CPU per request ${r.cpu.toFixed(2)}x`);
emitResult('p14', [
  check('P14 signed 20 KB delivery vs unsigned, req/s', `${github.rps.toFixed(3)}x`, '>= 0.90x', github.rps >= 0.9),
  check('P14 template signature (timestamp header, prefix) vs unsigned, req/s', `${templated.rps.toFixed(3)}x`, '>= 0.90x', templated.rps >= 0.9),
  check('P14 CPU per request, signed vs unsigned', `${github.cpu.toFixed(2)}x`, 'information', null),
  check('P14 CPU per request, template vs unsigned', `${templated.cpu.toFixed(2)}x`, 'information', null),
]);
