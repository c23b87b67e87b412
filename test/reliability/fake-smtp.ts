// A minimal SMTP server on loopback for fault tests, speaking just enough SMTP for
// nodemailer, with faults chosen by recipient: an address containing "refused" is answered
// 550 at RCPT TO, one containing "cut" has its connection destroyed in the middle of DATA.
// smtp-server (test/helpers/smtp-peer.ts) cannot drop a connection mid-message.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface FakeMessage {
  readonly from: string;
  readonly to: readonly string[];
  readonly data: string;
}

export class FakeSmtp {
  readonly messages: FakeMessage[] = [];
  /** Connections destroyed mid-DATA. */
  cuts = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<FakeSmtp> {
    let fake!: FakeSmtp;
    const server = createServer((socket) => fake.session(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fake = new FakeSmtp(server, (server.address() as AddressInfo).port);
    return fake;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private session(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => {});
    let buffer = '';
    let inData = false;
    let from = '';
    let to: string[] = [];
    let cutThis = false;
    const reply = (line: string) => {
      if (!socket.destroyed) socket.write(line + '\r\n');
    };
    reply('220 fake-smtp ready');
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (;;) {
        if (inData) {
          if (cutThis) {
            // Part of the message has arrived: go away without a word, as a crashed server would.
            this.cuts++;
            socket.destroy();
            return;
          }
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          this.messages.push({ from, to, data: buffer.slice(0, end) });
          buffer = buffer.slice(end + 5);
          inData = false;
          reply('250 2.0.0 queued');
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol < 0) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO') reply('250-fake-smtp\r\n250 8BITMIME');
        else if (verb === 'HELO') reply('250 fake-smtp');
        else if (verb === 'MAIL') {
          from = /<([^>]*)>/.exec(line)?.[1] ?? '';
          to = [];
          cutThis = false;
          reply('250 2.1.0 ok');
        } else if (verb === 'RCPT') {
          const address = /<([^>]*)>/.exec(line)?.[1] ?? '';
          if (address.includes('refused')) reply('550 5.1.1 <' + address + '>: Recipient address rejected: no such user');
          else {
            if (address.includes('cut')) cutThis = true;
            to.push(address);
            reply('250 2.1.5 ok');
          }
        } else if (verb === 'DATA') {
          inData = true;
          reply('354 go ahead');
        } else if (verb === 'RSET') {
          from = '';
          to = [];
          cutThis = false;
          reply('250 2.0.0 ok');
        } else if (verb === 'NOOP') reply('250 2.0.0 ok');
        else if (verb === 'QUIT') {
          reply('221 2.0.0 bye');
          socket.end();
          return;
        } else reply('502 5.5.2 command not implemented');
      }
    });
  }
}
