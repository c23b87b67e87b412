// The hand-written baseline of P3: a loop sending the same mail as the P3 endpoint's Email
// task over a pooled nodemailer transport with the service's options (same pool defaults:
// 5 connections, 100 messages each), CONCURRENCY sends in flight, for DURATION seconds after a
// 1 s warm-up. Prints {"from":…, "to":…, "sent":…} (Date.now() times of the measured window).
// Usage: node bench/baselines/p3-baseline.mjs --smtp-url smtp://127.0.0.1:PORT --concurrency 10 --duration 5
import nodemailer from 'nodemailer';
import SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import { commandLine, numberOption } from '../lib/cli.mjs';

const USAGE = `Usage: node bench/baselines/p3-baseline.mjs --smtp-url URL [--concurrency N] [--duration S]

The baseline of P3 (started by scenarios/p3-email.mjs): sends P3's mail in a loop over a pooled
nodemailer transport for a 1 s warm-up and then S seconds, and prints {"from","to","sent"} as JSON.

  --smtp-url URL   the SMTP server, smtp://127.0.0.1:PORT (required)
  --concurrency N  sends in flight (default 10)
  --duration S     measured seconds (default 5)
  -h, --help       this text
`;
const { values } = commandLine(
  USAGE,
  { 'smtp-url': { type: 'string' }, concurrency: { type: 'string' }, duration: { type: 'string' } },
  { required: ['smtp-url'] },
);
const concurrency = numberOption(USAGE, values, 'concurrency', 10);
const duration = numberOption(USAGE, values, 'duration', 5);
const transport = nodemailer.createTransport(
  new SMTPPool({ pool: true, connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000, disableUrlAccess: true, url: values['smtp-url'] }),
);
transport.on('error', () => {});
// What the service's Email task hands to nodemailer for ?a=hello&b=wörld (see src/tasks/email.ts).
const mail = () => ({
  from: { name: '', address: 'bench@example.com' },
  to: { name: '', address: 'sink@example.com' },
  subject: 'P3 hello',
  headers: {},
  alternatives: [{ contentType: 'text/plain; charset=utf-8', content: 'Hello hello,\n\nthis is P3 for wörld.\n' }],
  attachments: [],
  disableUrlAccess: true,
});

const warmupEnd = Date.now() + 1000;
const end = warmupEnd + duration * 1000;
let sent = 0;
async function loop() {
  while (Date.now() < end) {
    await transport.sendMail(mail());
    if (Date.now() >= warmupEnd) sent++;
  }
}
await Promise.all(Array.from({ length: concurrency }, loop));
process.stdout.write(`${JSON.stringify({ from: warmupEnd, to: end, sent })}\n`);
transport.close();
