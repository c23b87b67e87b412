#!/usr/bin/env node
// The peers of the bundled examples, on loopback, for trying them out by hand: a small CRM API
// on 127.0.0.1:4000 (with a chat webhook at /chat and a relay receiver at /relay for the
// webhooks example) and an SMTP server on 127.0.0.1:2525 that prints each mail.
//   node scripts/local-peers.mjs
import { createHash } from 'node:crypto';
import http from 'node:http';
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';

let nextId = 1000;
const crm = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const bytes = Buffer.concat(chunks);
    if (req.url === '/relay') {
      // A relayed delivery: its size and hash, to compare with the file that was posted.
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      console.log(
        `relay ${req.method} ${req.url} ${req.headers['content-type'] ?? ''} X-GitHub-Event: ${req.headers['x-github-event'] ?? ''}, ${bytes.length} bytes, sha256 ${sha256}`,
      );
      return void res.writeHead(200).end();
    }
    const body = bytes.toString('utf8');
    console.log(`${req.url === '/chat' ? 'chat ' : 'crm  '} ${req.method} ${req.url} ${req.headers['content-type'] ?? ''} ${body}`);
    if (req.method === 'POST' && req.url === '/chat') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    } else if (req.method === 'POST' && req.url === '/crm/contacts') {
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: nextId++ }));
    } else if (req.method === 'POST' && /^\/crm\/contacts\/\d+\/notes$/.test(req.url ?? '')) {
      res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
    } else if (req.method === 'POST' && req.url === '/newsletter/subscribers') {
      res.writeHead(204).end();
    } else res.writeHead(404).end();
  });
});
crm.listen(4000, '127.0.0.1', () => console.log('crm   listening on http://127.0.0.1:4000'));

const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  onData(stream, session, callback) {
    simpleParser(stream).then(
      (mail) => {
        const attachments = mail.attachments.map((a) => `${a.filename ?? '(inline)'} (${a.size} bytes)`).join(', ') || 'none';
        console.log(
          `smtp  mail from ${session.envelope.mailFrom && session.envelope.mailFrom.address} to ${session.envelope.rcptTo.map((r) => r.address).join(', ')}`,
        );
        console.log(`      subject: ${mail.subject}; attachments: ${attachments}`);
        console.log(`      ${(mail.text ?? '').trim().replace(/\n/g, '\n      ')}`);
        callback();
      },
      (error) => callback(error),
    );
  },
});
smtp.listen(2525, '127.0.0.1', () => console.log('smtp  listening on 127.0.0.1:2525'));
