// Soak (issue 7): the real binary under concurrent load mixing good and bad requests, on an
// endpoint with an HttpRequest task and an Email task (fixtures/reliability/tasks, "order").
// Checks that good requests never get a 5xx, that every task is accounted for (the HTTP peer
// and the SMTP peer received each successful good request's call and mail exactly once, and
// nothing for a request that failed), and reports memory (RSS) at start and end.
//
//   node bench/scenarios/soak.mjs [--duration 60] [--concurrency 12] [--json]
//
// Exit 0 when every invariant held, 1 otherwise. test/reliability/soak.e2e.test.ts runs the
// same runSoak() for a few seconds inside npm test. Self-contained (no TypeScript helpers) so
// that plain node runs it.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { SMTPServer } from 'smtp-server';
import { commandLine, numberOption } from '../lib/cli.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/endpoint-service.js', import.meta.url));
const APP = fileURLToPath(new URL('../../fixtures/reliability/tasks/endpoints.xml', import.meta.url));

/** Deterministic PRNG (mulberry32), so a run's request mix can be replayed with its seed. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function rssMiB(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

/** The HTTP peer: counts /record calls by item, answering after a small random delay. */
async function startHttpPeer(random) {
  const received = new Map();
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let item = '(unreadable)';
      try {
        item = JSON.parse(Buffer.concat(chunks).toString('utf8')).item;
      } catch {
        /* counted under (unreadable): a body the service should never send */
      }
      received.set(item, (received.get(item) ?? 0) + 1);
      // A little latency, so requests overlap as they do against a real upstream.
      setTimeout(
        () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"ok":true}');
        },
        Math.floor(random() * 5),
      );
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The SMTP peer: counts accepted messages by item (from the subject "Order ITEM"). */
async function startSmtpPeer() {
  const received = new Map();
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks = [];
      stream.on('data', (c) => chunks.push(c));
      stream.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const item = /^Subject: Order (.*)$/m.exec(text)?.[1]?.trim() ?? '(no subject)';
        received.set(item, (received.get(item) ?? 0) + 1);
        callback();
      });
    },
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${server.server.address().port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Starts `serve`; resolves with its URL once the ready line is printed. Counts log lines as they come. */
function startService(peer, smtpUrl, extraArgs) {
  const child = spawn(process.execPath, [BIN, 'serve', APP, '--port', '0', '--workers', '1', '--log-format', 'json', '--smtp-url', smtpUrl, ...extraArgs], {
    cwd: ROOT,
    env: { ...process.env, PEER: peer.origin, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = { lines: 0, taskOutcomes: {}, errors: [], unexpected: [] };
  let partial = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    partial += chunk;
    const lines = partial.split('\n');
    partial = lines.pop();
    for (const text of lines) {
      if (text === '') continue;
      log.lines++;
      let line;
      try {
        line = JSON.parse(text);
      } catch {
        // Only JSON lines are expected on stderr once serving: anything else is worth seeing.
        if (log.unexpected.length < 20) log.unexpected.push(text.slice(0, 300));
        continue;
      }
      if (line.msg === 'task') {
        const key = `${line.task}:${line.outcome}`;
        log.taskOutcomes[key] = (log.taskOutcomes[key] ?? 0) + 1;
      } else if (line.level === 'error' && line.msg !== 'request' && log.errors.length < 20) {
        log.errors.push(text.slice(0, 300));
      }
    }
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      const m = /endpoint-service listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    exited.then((e) => reject(new Error(`serve exited (${e.code ?? e.signal}) before it was ready`)));
  });
  return { child, ready, exited, log };
}

/** A malformed request on a raw socket: the answer's status, or 0 when the server just closed. */
function garbage(url) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    const done = () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0));
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('close', done);
    socket.on('error', () => {});
    socket.write('POST /order HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
  });
}

/**
 * The kinds of request in the mix. `good` ones must succeed; the others have a known answer.
 * `failing-task` passes the primary action but its Email task cannot use the address (two
 * recipients): the request is refused with 400 before its first side effect, so neither its
 * HTTP call nor its mail goes out.
 */
const BAD_KINDS = [
  { kind: 'missing-parameter', expect: 400, send: (base) => fetch(`${base}/order`) },
  { kind: 'bad-percent-encoding', expect: 400, send: (base) => fetch(`${base}/order?item=%zz`) },
  { kind: 'unknown-endpoint', expect: 404, send: (base) => fetch(`${base}/no-such-endpoint`) },
  { kind: 'wrong-method', expect: 405, send: (base) => fetch(`${base}/order?item=x`, { method: 'PUT' }) },
  {
    kind: 'malformed-json',
    expect: 400,
    send: (base) => fetch(`${base}/order`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"item":' }),
  },
  {
    kind: 'unsupported-type',
    expect: 415,
    send: (base) => fetch(`${base}/order`, { method: 'POST', headers: { 'content-type': 'text/csv' }, body: 'item,x' }),
  },
  { kind: 'garbage-http', expect: 400, raw: true, send: (base) => garbage(base) },
  {
    kind: 'failing-task',
    expect: 400,
    task: true,
    send: (base, item) => fetch(`${base}/order`, { method: 'POST', body: new URLSearchParams({ item, to: 'a@example.test, b@example.test' }) }),
  },
];

/**
 * Runs the soak. Options: durationMs, concurrency, goodShare (0..1), seed, log (a function
 * for progress lines). Resolves with the figures and the list of violated invariants.
 */
export async function runSoak(options = {}) {
  const durationMs = options.durationMs ?? 60_000;
  const concurrency = options.concurrency ?? 12;
  const goodShare = options.goodShare ?? 0.6;
  const seed = options.seed ?? Date.now() % 2 ** 31;
  const say = options.log ?? (() => {});
  const random = prng(seed);

  const peer = await startHttpPeer(prng(seed + 1));
  const smtp = await startSmtpPeer();
  const service = startService(peer, smtp.url, options.serveArgs ?? []);
  const figures = {
    seed,
    durationS: 0,
    concurrency,
    requests: 0,
    good: { sent: 0, ok: 0, serverErrors: 0, otherFailures: 0, examples: [] },
    bad: { sent: 0, asExpected: 0, unexpected: 0, serverErrors: 0, byKind: {}, examples: [] },
    tasks: {},
    rssMiB: { start: NaN, end: NaN, max: NaN, samples: [] },
    exit: null,
  };
  const goodOk = new Set();
  const badTaskItems = new Set();
  let sampler;
  try {
    const base = await service.ready;
    const pid = service.child.pid;
    // Warm-up: the first requests open the SMTP pool and JIT the hot paths; memory is measured after.
    for (let i = 0; i < 20; i++) {
      const item = `warm-${i}`;
      const r = await fetch(`${base}/order`, { method: 'POST', body: new URLSearchParams({ item }) });
      await r.text();
      if (r.status === 200) goodOk.add(item);
      else throw new Error(`warm-up request answered ${r.status}`);
    }
    figures.rssMiB.start = rssMiB(pid);
    figures.rssMiB.max = figures.rssMiB.start;
    const sampleEvery = Math.max(250, Math.floor(durationMs / 60));
    sampler = setInterval(() => {
      const now = rssMiB(pid);
      figures.rssMiB.samples.push(Math.round(now * 10) / 10);
      if (!(now <= figures.rssMiB.max)) figures.rssMiB.max = now;
    }, sampleEvery);

    const started = Date.now();
    const deadline = started + durationMs;
    let counter = 0;
    let lastReport = started;
    const client = async () => {
      while (Date.now() < deadline) {
        const n = counter++;
        figures.requests++;
        if (random() < goodShare) {
          const item = `good-${n}`;
          figures.good.sent++;
          try {
            const r = await fetch(`${base}/order`, { method: 'POST', body: new URLSearchParams({ item, to: 'buyer@example.test' }) });
            const text = await r.text();
            if (r.status === 200 && text === `ordered ${item}`) {
              figures.good.ok++;
              goodOk.add(item);
            } else {
              if (r.status >= 500) figures.good.serverErrors++;
              else figures.good.otherFailures++;
              if (figures.good.examples.length < 5) figures.good.examples.push(`${item}: ${r.status} ${text.slice(0, 200)}`);
            }
          } catch (error) {
            figures.good.otherFailures++;
            if (figures.good.examples.length < 5) figures.good.examples.push(`${item}: ${error.cause?.code ?? error.message}`);
          }
        } else {
          const bad = BAD_KINDS[Math.floor(random() * BAD_KINDS.length)];
          const item = `bad-${n}`;
          figures.bad.sent++;
          const count = (figures.bad.byKind[bad.kind] ??= { sent: 0, asExpected: 0 });
          count.sent++;
          if (bad.task) badTaskItems.add(item);
          try {
            const r = await bad.send(base, item);
            const status = bad.raw ? r : r.status;
            if (!bad.raw) await r.text();
            if (status >= 500 && status !== bad.expect) figures.bad.serverErrors++;
            if (status === bad.expect) {
              figures.bad.asExpected++;
              count.asExpected++;
            } else {
              figures.bad.unexpected++;
              if (figures.bad.examples.length < 5) figures.bad.examples.push(`${bad.kind}: ${status}, expected ${bad.expect}`);
            }
          } catch (error) {
            figures.bad.unexpected++;
            if (figures.bad.examples.length < 5) figures.bad.examples.push(`${bad.kind}: ${error.cause?.code ?? error.message}`);
          }
        }
        if (Date.now() - lastReport >= 10_000) {
          lastReport = Date.now();
          say(`  ${Math.round((lastReport - started) / 1000)} s: ${figures.requests} requests, ${figures.good.ok} good ok, RSS ${rssMiB(pid).toFixed(1)} MiB`);
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, client));
    figures.durationS = Math.round((Date.now() - started) / 100) / 10;
    clearInterval(sampler);
    sampler = undefined;
    figures.rssMiB.end = rssMiB(pid);

    // tasks="wait": each answer came after its tasks, so the peers have everything already.
    figures.tasks = account(goodOk, badTaskItems, peer.received, smtp.received);
    figures.tasks.logOutcomes = service.log.taskOutcomes;
    figures.serviceErrorLines = service.log.errors.length;
    figures.unexpectedStderr = service.log.unexpected;
    service.child.kill('SIGTERM');
    figures.exit = await service.exited;
  } finally {
    if (sampler) clearInterval(sampler);
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
    await Promise.all([peer.close(), smtp.close()]);
  }
  figures.rssMiB.start = round(figures.rssMiB.start);
  figures.rssMiB.end = round(figures.rssMiB.end);
  figures.rssMiB.max = round(figures.rssMiB.max);
  return { figures, violations: violations(figures) };
}

function round(n) {
  return Math.round(n * 10) / 10;
}

/** Compares what should have arrived (each successful good request once) with what did. */
function account(goodOk, badTaskItems, httpReceived, smtpReceived) {
  const result = { goodSucceeded: goodOk.size };
  for (const [name, received] of [
    ['http', httpReceived],
    ['smtp', smtpReceived],
  ]) {
    let receivedForGood = 0;
    const missing = [];
    const doubled = [];
    for (const item of goodOk) {
      const n = received.get(item) ?? 0;
      if (n >= 1) receivedForGood++;
      if (n === 0 && missing.length < 5) missing.push(item);
      if (n > 1 && doubled.length < 5) doubled.push(`${item} x${n}`);
    }
    const missingCount = [...goodOk].filter((i) => !received.has(i)).length;
    const doubledCount = [...goodOk].filter((i) => (received.get(i) ?? 0) > 1).length;
    // A request refused before its first side effect must have had neither its call nor its mail.
    const strays = [...received.keys()].filter((i) => !goodOk.has(i) && !badTaskItems.has(i));
    const forFailedTasks = [...badTaskItems].filter((i) => received.has(i)).length;
    result[name] = {
      receivedForGood,
      missing: missingCount,
      missingExamples: missing,
      doubled: doubledCount,
      doubledExamples: doubled,
      strays: strays.slice(0, 5),
      strayCount: strays.length,
      forFailingTaskRequests: forFailedTasks,
    };
  }
  return result;
}

function violations(f) {
  const v = [];
  if (f.good.sent === 0) v.push('no good request was sent');
  if (f.good.serverErrors > 0) v.push(`${f.good.serverErrors} good requests got a 5xx: ${f.good.examples.join('; ')}`);
  if (f.good.otherFailures > 0) v.push(`${f.good.otherFailures} good requests failed otherwise: ${f.good.examples.join('; ')}`);
  if (f.bad.unexpected > 0) v.push(`${f.bad.unexpected} bad requests got an unexpected answer: ${f.bad.examples.join('; ')}`);
  for (const name of ['http', 'smtp']) {
    const t = f.tasks[name];
    if (!t) continue;
    if (t.missing > 0) v.push(`${name}: ${t.missing} successful good requests were never received (${t.missingExamples.join(', ')})`);
    if (t.doubled > 0) v.push(`${name}: ${t.doubled} good requests were received more than once (${t.doubledExamples.join(', ')})`);
    if (t.strayCount > 0) v.push(`${name}: ${t.strayCount} deliveries for requests that did not succeed (${t.strays.join(', ')})`);
  }
  if (f.tasks.smtp && f.tasks.smtp.forFailingTaskRequests > 0)
    v.push(`smtp: ${f.tasks.smtp.forFailingTaskRequests} mails were sent for requests whose Email task failed`);
  if (f.tasks.http && f.tasks.http.forFailingTaskRequests > 0)
    v.push(`http: ${f.tasks.http.forFailingTaskRequests} calls went out for requests refused before their first side effect`);
  if (f.unexpectedStderr?.length > 0) v.push(`non-JSON lines on stderr: ${f.unexpectedStderr.join(' | ')}`);
  if (f.exit && f.exit.code !== 0) v.push(`serve exited with ${f.exit.code ?? f.exit.signal} on SIGTERM`);
  return v;
}

function printSummary({ figures: f, violations: v }) {
  const t = f.tasks;
  console.log(`soak: ${f.durationS} s, ${f.concurrency} concurrent clients, seed ${f.seed}`);
  console.log(
    `  requests      ${f.requests} (${Math.round(f.requests / f.durationS)}/s): good ${f.good.sent} (ok ${f.good.ok}, 5xx ${f.good.serverErrors}, other failures ${f.good.otherFailures}), bad ${f.bad.sent} (as expected ${f.bad.asExpected}, unexpected ${f.bad.unexpected})`,
  );
  console.log(
    `  bad by kind   ${Object.entries(f.bad.byKind)
      .map(([k, c]) => `${k} ${c.asExpected}/${c.sent}`)
      .join(', ')}`,
  );
  console.log(
    `  tasks         successful good requests (warm-up included) ${t.goodSucceeded}: HTTP received ${t.http.receivedForGood} (missing ${t.http.missing}, doubled ${t.http.doubled}), SMTP received ${t.smtp.receivedForGood} (missing ${t.smtp.missing}, doubled ${t.smtp.doubled}); mails for failing-task requests ${t.smtp.forFailingTaskRequests}`,
  );
  console.log(
    `  task log      ${Object.entries(t.logOutcomes)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
  );
  console.log(`  RSS           start ${f.rssMiB.start} MiB, end ${f.rssMiB.end} MiB, max ${f.rssMiB.max} MiB`);
  console.log(`  exit          ${f.exit?.code ?? f.exit?.signal} after SIGTERM`);
  console.log(v.length === 0 ? 'soak: every invariant held' : `soak: ${v.length} invariant(s) violated:\n  - ${v.join('\n  - ')}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const USAGE = `Usage: node bench/scenarios/soak.mjs [--duration S] [--concurrency N] [--seed N] [--json]

Soak: serve under concurrent good and bad requests with an HttpRequest and an Email task; checks
that good requests never get a 5xx and every task is accounted for. Exit 0 when every invariant held.

  --duration S     seconds of load (default 60)
  --concurrency N  concurrent clients (default 12)
  --seed N         the request mix's seed, to replay a run (default: random)
  --json           print the figures as JSON instead of the summary
  -h, --help       this text
`;
  const { values } = commandLine(USAGE, {
    duration: { type: 'string' },
    concurrency: { type: 'string' },
    seed: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  const result = await runSoak({
    durationMs: numberOption(USAGE, values, 'duration', 60) * 1000,
    concurrency: numberOption(USAGE, values, 'concurrency', 12),
    ...(values.seed !== undefined ? { seed: numberOption(USAGE, values, 'seed', 0) } : {}),
    log: (line) => console.log(line),
  });
  if (values.json) console.log(JSON.stringify(result, null, 2));
  else printSummary(result);
  process.exitCode = result.violations.length === 0 ? 0 : 1;
}
