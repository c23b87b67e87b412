// P8: memory under concurrent large uploads (issue #20). The real binary (--workers 1, core 0) gets
// N clients (peers/p8-client.mjs, core 1) that each post one 9 MB file as multipart at the same
// moment, in three cases, each against a freshly started process:
//
//   issue    60 clients to `notify`: one HttpRequest task to an upstream answering after 3 s,
//            nothing reads the file (the case measured on main: ~60 -> ~670 MB RSS)
//   no-mail  N clients to `notify`
//   mail     N clients to `mail`: one Email task attaching the uploaded file, to an SMTP sink
//            (peers/p8-smtp-sink.mjs, core 1) that hashes every attachment it receives
//
// VmRSS of the serving process is sampled every 50 ms and its peak (VmHWM) read at the end.
// Targets, per case: peak RSS under 200 MB (decimal); every upload answered 200, 503 or 413;
// every 200 of `mail` delivered with the exact bytes sent (SHA-256); no temporary file left
// once every request is answered. Figures go to docs/performance-log.md, "P8".
//
//   node bench/scenarios/p8-uploads.mjs [--quick] [--clients N] [--size BYTES] [--cases issue,no-mail,mail]
//                             [--bin PATH/endpoint-service.js] [--max-inflight-body-size SIZE]
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bin as ownBin, check, emitResult, fixture, LOAD_CPU, peersDir, pinned, requireBuild, rssMiB, startProcess, startScript } from '../lib/common.mjs';

const USAGE = `Usage: node bench/scenarios/p8-uploads.mjs [--quick] [--clients N] [--size BYTES] [--cases LIST]
                                          [--bin PATH] [--max-inflight-body-size SIZE]

P8: peak RSS of one worker while N clients each post a 9 MB upload at once, to an endpoint that
mails it and to one that does not (and the 60-client case of issue #20).

  --quick                     100 clients instead of 200
  --clients N                 clients of the no-mail and mail cases (default 200)
  --size BYTES                bytes per uploaded file (default 9000000)
  --cases LIST                comma-separated, of issue, no-mail, mail (default all)
  --bin PATH                  another build's bin/endpoint-service.js, to measure it instead
  --max-inflight-body-size S  passed to serve (default: serve's own)
  -h, --help                  this text
`;
const cli = (() => {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  try {
    return parseArgs({
      args,
      strict: true,
      options: {
        quick: { type: 'boolean', default: false },
        clients: { type: 'string' },
        size: { type: 'string', default: '9000000' },
        cases: { type: 'string', default: 'issue,no-mail,mail' },
        bin: { type: 'string' },
        'max-inflight-body-size': { type: 'string' },
      },
    }).values;
  } catch (error) {
    process.stderr.write(`p8-uploads.mjs: ${String(error.message).split('. ')[0]}\n\n${USAGE}`);
    process.exit(2);
  }
})();
requireBuild();
const clients = Number(cli.clients ?? (cli.quick ? 100 : 200));
const size = Number(cli.size);
const bin = cli.bin ? path.resolve(cli.bin) : ownBin;
const app = fixture('p8-uploads');
const TARGET_BYTES = 200e6;
const mb = (bytes) => (bytes / 1e6).toFixed(1);

const CASES = [
  { name: 'issue', endpoint: 'notify', clients: 60 },
  { name: 'no-mail', endpoint: 'notify', clients },
  { name: 'mail', endpoint: 'mail', clients },
].filter((c) => cli.cases.split(',').includes(c.name));

const upstream = await startScript('peers/upstream.mjs', ['--delay', '3000'], { cpu: LOAD_CPU });
const sink = await startScript('peers/p8-smtp-sink.mjs', [], { cpu: LOAD_CPU, ipc: true, ready: /^(\d+)$/m });
let reports = 0;
const sinkMessages = () =>
  new Promise((resolve) => {
    const id = reports++;
    const onMessage = (m) => {
      if (m?.type !== 'report' || m.id !== id) return;
      sink.child.off('message', onMessage);
      resolve(m.messages);
    };
    sink.child.on('message', onMessage);
    sink.child.send({ type: 'report', id });
  });

/** VmHWM (peak resident set) of a process, in bytes. */
function peakBytes(pid) {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : NaN;
}

/** Files under `dir`, at any depth. */
function filesUnder(dir) {
  let count = 0;
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    count += statSync(full).isDirectory() ? filesUnder(full) : 1;
  }
  return count;
}

function runClients(url, n) {
  const argv = pinned(LOAD_CPU, [process.execPath, path.join(peersDir, 'p8-client.mjs'), '--url', url, '--clients', String(n), '--size', String(size)]);
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`p8-client exited ${code}`))));
  });
}

const checks = [];
const summaries = [];
try {
  for (const c of CASES) {
    const uploadDir = mkdtempSync(path.join(os.tmpdir(), 'p8-uploads-'));
    const argv = [
      process.execPath,
      bin,
      'serve',
      app,
      '--port',
      '0',
      '--workers',
      '1',
      '--log-format',
      'json',
      '--request-timeout',
      '10m',
      '--smtp-url',
      `smtp://127.0.0.1:${sink.url}`,
    ];
    // Older builds know neither option: --bin measures them as they are.
    if (bin === ownBin) argv.push('--upload-dir', uploadDir);
    if (cli['max-inflight-body-size'] !== undefined) argv.push('--max-inflight-body-size', cli['max-inflight-body-size']);
    let service;
    try {
      service = await startProcess(argv, { env: { ...process.env, UPSTREAM: upstream.url }, ready: /^endpoint-service listening on (\S+)$/m, stderr: 'pipe' });
      const before = rssMiB(service.pid) * 2 ** 20;
      const mailsBefore = (await sinkMessages()).length;
      const samples = [];
      const t0 = performance.now();
      const timer = setInterval(() => {
        try {
          samples.push({ t: performance.now() - t0, rss: rssMiB(service.pid) * 2 ** 20 });
        } catch {
          /* exited */
        }
      }, 50);
      const load = await runClients(`${service.url}/${c.endpoint}`, c.clients);
      clearInterval(timer);
      const peak = peakBytes(service.pid);
      const after = rssMiB(service.pid) * 2 ** 20;
      // A run's files are removed just after its last task ends, which may be just after the answer.
      let leftFiles = bin === ownBin ? filesUnder(uploadDir) : NaN;
      for (let waited = 0; leftFiles > 0 && waited < 5000; waited += 100) {
        await new Promise((r) => setTimeout(r, 100));
        leftFiles = filesUnder(uploadDir);
      }

      const byStatus = new Map();
      for (const r of load.results) byStatus.set(r.status ?? r.error, (byStatus.get(r.status ?? r.error) ?? 0) + 1);
      const accepted = load.results.filter((r) => r.status === 200);
      const refused = load.results.filter((r) => r.status === 503 || r.status === 413);
      const other = load.results.length - accepted.length - refused.length;
      let delivered = NaN;
      let exact = NaN;
      let mailsReceived = NaN;
      if (c.endpoint === 'mail') {
        const mails = (await sinkMessages()).slice(mailsBefore);
        mailsReceived = mails.length;
        const bySubject = new Map(mails.map((m) => [m.subject, m]));
        delivered = accepted.filter((r) => bySubject.has(`P8 ${r.client}`)).length;
        exact = accepted.filter((r) => {
          const a = bySubject.get(`P8 ${r.client}`)?.attachments[0];
          return a !== undefined && a.bytes === size && a.sha256 === load.sha256[r.client] && a.filename === `${r.client}.bin`;
        }).length;
      }
      const peakAt = samples.reduce((best, s) => (s.rss > best.rss ? s : best), { t: 0, rss: 0 });
      const statuses = [...byStatus].map(([s, n]) => `${s}: ${n}`).join(', ');
      console.log(
        `P8 ${c.name}: ${c.clients} clients x ${mb(size)} MB to /${c.endpoint}, --workers 1 on core 0, clients on core 1${bin === ownBin ? '' : ` (build ${bin})`}`,
      );
      console.log(
        `  RSS before ${mb(before)} MB, peak ${mb(peak)} MB (VmHWM; sampled peak ${mb(peakAt.rss)} MB at ${(peakAt.t / 1000).toFixed(1)} s), after ${mb(after)} MB`,
      );
      console.log(
        `  answers ${statuses}; all answered after ${(load.wallMs / 1000).toFixed(1)} s; slowest 200 ${(Math.max(0, ...accepted.map((r) => r.ms)) / 1000).toFixed(1)} s`,
      );
      const details = new Map();
      for (const r of load.results)
        if (r.status !== 200) details.set(`${r.status ?? r.error}: ${r.detail ?? ''}`, (details.get(`${r.status ?? r.error}: ${r.detail ?? ''}`) ?? 0) + 1);
      for (const [what, n] of details) console.log(`    ${n} x ${what}`);
      if (c.endpoint === 'mail')
        console.log(`  mails: ${delivered} of ${accepted.length} accepted delivered, ${exact} byte-exact; ${mailsReceived} received in all`);
      if (bin === ownBin) console.log(`  temporary files left once every request was answered: ${leftFiles}`);
      console.log(
        `  load average ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
      );
      summaries.push({ case: c.name, clients: c.clients, before, peak, after, statuses, wallMs: load.wallMs, delivered, exact, mailsReceived, leftFiles });

      checks.push(check(`P8 ${c.name} peak RSS (${c.clients} x ${mb(size)} MB)`, `${mb(peak)} MB`, '< 200 MB', peak < TARGET_BYTES));
      checks.push(check(`P8 ${c.name} answers`, `${accepted.length} x 200, ${refused.length} x 503/413, ${other} other`, 'no other', other === 0));
      if (c.endpoint === 'mail') {
        checks.push(check(`P8 ${c.name} accepted mails byte-exact`, `${exact} of ${accepted.length}`, 'all', exact === accepted.length));
        checks.push(check(`P8 ${c.name} mails received`, `${mailsReceived} for ${accepted.length} accepted`, 'equal', mailsReceived === accepted.length));
      }
      if (bin === ownBin) checks.push(check(`P8 ${c.name} temporary files left`, String(leftFiles), '0', leftFiles === 0));
    } finally {
      await service?.stop();
      rmSync(uploadDir, { recursive: true, force: true });
    }
  }
} finally {
  await Promise.all([upstream.stop(), sink.stop()]);
}
emitResult('p8', checks, { summaries });
