// The SMTP server of P3 (smtp-server, no TLS, no auth): reads every message in full and
// records when it arrived. Prints its port once listening; answers IPC requests
// {type: 'count', from, to} (Date.now() times) with the arrivals in that window.
import { SMTPServer } from 'smtp-server';
import { commandLine } from '../lib/cli.mjs';

commandLine(`Usage: node bench/peers/smtp-sink.mjs

The SMTP server of P3 (started by scenarios/p3-email.mjs with an IPC channel): reads every message
and records when it arrived. Prints its port once listening; SIGTERM stops it.

  -h, --help  this text
`);

const arrivals = [];
const server = new SMTPServer({
  authOptional: true,
  // Plain SMTP for both the service and the baseline: neither pays for a TLS handshake.
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.on('end', () => {
      arrivals.push(Date.now());
      callback();
    });
  },
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.server.address().port}\n`));
process.on('message', (m) => {
  if (m?.type !== 'count') return;
  const inWindow = arrivals.filter((t) => t >= m.from && t <= m.to);
  process.send({ type: 'count', id: m.id, count: inWindow.length, first: inWindow[0] ?? null, last: inWindow.at(-1) ?? null, total: arrivals.length });
});
process.on('SIGTERM', () => process.exit(0));
