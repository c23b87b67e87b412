// The SMTP server of P8 (smtp-server, no TLS, no auth): reads every message as a stream and,
// without keeping it, decodes the base64 body of each attachment part and hashes it, so a
// 9 MB attachment can be checked byte for byte at the cost of a few KiB. Prints its port once
// listening; answers the IPC request {type: 'report', id} with every message received so far:
// {subject, attachments: [{filename, bytes, sha256}]}.
//
// The message is the one nodemailer writes: MIME parts, headers folded with leading
// whitespace, an attachment part with `Content-Disposition: attachment` and base64 lines.
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { SMTPServer } from 'smtp-server';

const USAGE = `Usage: node bench/peers/p8-smtp-sink.mjs

The SMTP server of P8 (started by scenarios/p8-uploads.mjs): hashes every attachment it receives and
reports them over IPC. Prints its port once listening. No options.
`;
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(USAGE);
  process.exit(0);
}
try {
  parseArgs({ args: process.argv.slice(2), strict: true, options: {} });
} catch (error) {
  process.stderr.write(`p8-smtp-sink.mjs: ${String(error.message).split('. ')[0]}\n\n${USAGE}`);
  process.exit(2);
}

const messages = [];

/** A line-by-line reader of one message: headers of each part, base64 of attachment parts. */
class MessageReader {
  constructor() {
    this.pending = '';
    this.subject = null;
    this.attachments = [];
    this.inHeaders = true;
    this.headers = '';
    this.current = null;
    this.boundaries = [];
  }

  write(chunk) {
    this.pending += chunk.toString('latin1');
    let nl;
    let start = 0;
    while ((nl = this.pending.indexOf('\n', start)) >= 0) {
      this.line(this.pending.slice(start, nl).replace(/\r$/, ''));
      start = nl + 1;
    }
    this.pending = this.pending.slice(start);
  }

  end() {
    if (this.pending !== '') this.line(this.pending);
    this.close();
    return { subject: this.subject, attachments: this.attachments };
  }

  line(text) {
    if (this.inHeaders) {
      if (text !== '') {
        this.headers += /^[ \t]/.test(text) ? ` ${text.trim()}` : `\n${text}`;
        return;
      }
      this.inHeaders = false;
      const headers = this.headers;
      this.headers = '';
      const subject = /\nSubject: *(.*)/i.exec(headers);
      if (subject && this.subject === null) this.subject = subject[1];
      const boundary = /\nContent-Type: *multipart\/[^\n]*boundary="?([^";\n]+)"?/i.exec(headers);
      if (boundary) this.boundaries.push(boundary[1]);
      const disposition = /\nContent-Disposition: *attachment[^\n]*filename="?([^";\n]+)"?/i.exec(headers);
      if (disposition && /\nContent-Transfer-Encoding: *base64/i.test(headers)) {
        this.current = { filename: disposition[1], bytes: 0, hash: createHash('sha256') };
      }
      return;
    }
    if (text.startsWith('--') && this.boundaries.some((b) => text === `--${b}` || text === `--${b}--`)) {
      this.close();
      // After a closing delimiter comes an epilogue, after any other the headers of the next part.
      this.inHeaders = !this.boundaries.some((b) => text === `--${b}--`);
      return;
    }
    if (this.current !== null && text !== '') {
      const bytes = Buffer.from(text, 'base64');
      this.current.bytes += bytes.length;
      this.current.hash.update(bytes);
    }
  }

  close() {
    if (this.current === null) return;
    this.attachments.push({ filename: this.current.filename, bytes: this.current.bytes, sha256: this.current.hash.digest('hex') });
    this.current = null;
  }
}

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  size: 0,
  onData(stream, _session, callback) {
    const reader = new MessageReader();
    stream.on('data', (chunk) => reader.write(chunk));
    stream.on('end', () => {
      messages.push({ ...reader.end(), at: Date.now() });
      callback();
    });
  },
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.server.address().port}\n`));
process.on('message', (m) => {
  if (m?.type === 'report') process.send({ type: 'report', id: m.id, messages });
});
process.on('SIGTERM', () => process.exit(0));
