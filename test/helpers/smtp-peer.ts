// A real SMTP server (smtp-server) on 127.0.0.1 for task tests: records each accepted message,
// parsed with mailparser, and can refuse chosen recipients.
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface ReceivedMail {
  readonly envelope: { readonly from: string; readonly to: readonly string[] };
  readonly parsed: ParsedMail;
  readonly raw: string;
  readonly receivedAt: number;
  /** smtp-server's id of the SMTP connection the message came over. */
  readonly connectionId: string;
}

export interface SmtpPeerOptions {
  /** Recipients answered with 550 at RCPT TO. */
  readonly refuseRecipients?: readonly string[];
  /** The first this many RCPT TO commands get a temporary 451, as a greylisting server answers. */
  readonly deferFirstRecipients?: number;
  /** Offer STARTTLS (with smtp-server's self-signed certificate); off by default. */
  readonly offerStartTls?: boolean;
  /** Offer AUTH on the plain connection, without STARTTLS (a server that takes a password in clear); counted in `authAttempts`. */
  readonly offerAuthWithoutTls?: boolean;
  /**
   * Called once a message's data has arrived; the message is recorded and the 250 sent only when
   * it resolves (a server that accepted the data but has not said so yet).
   */
  readonly holdData?: () => Promise<void>;
}

export class SmtpPeer {
  readonly messages: ReceivedMail[] = [];
  /** Every RCPT TO seen, accepted or not. */
  readonly recipientsTried: string[] = [];
  /** Messages whose data has fully arrived, recorded or not yet (holdData). */
  dataArrived = 0;
  /** AUTH commands that reached onAuth (offerAuthWithoutTls): a password that crossed the wire. */
  authAttempts = 0;
  /** Recipients answered with 550 at RCPT TO, lower-cased: refuseRecipients, changeable while the peer runs (a mailbox fixed). */
  readonly refused = new Set<string>();
  /** How many more RCPT TO get a temporary 451: deferFirstRecipients, changeable while the peer runs. */
  deferRecipients = 0;
  private readonly waiters: { count: number; resolve: () => void; data?: boolean }[] = [];

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  static async start(options: SmtpPeerOptions = {}): Promise<SmtpPeer> {
    let peer!: SmtpPeer;
    const config: SMTPServerOptions = {
      secure: false,
      authOptional: true,
      disabledCommands: options.offerAuthWithoutTls ? ['STARTTLS'] : options.offerStartTls ? ['AUTH'] : ['STARTTLS', 'AUTH'],
      ...(options.offerAuthWithoutTls
        ? {
            allowInsecureAuth: true,
            onAuth(auth: { username?: string | undefined }, _session: unknown, callback: (error: Error | null, response?: { user: string }) => void) {
              peer.authAttempts++;
              callback(null, { user: auth.username ?? '' });
            },
          }
        : {}),
      logger: false,
      onRcptTo(address, _session, callback) {
        peer.recipientsTried.push(address.address);
        if (peer.deferRecipients > 0) {
          peer.deferRecipients--;
          callback(Object.assign(new Error('Greylisted, try again later'), { responseCode: 451 }));
        } else if (peer.refused.has(address.address.toLowerCase())) {
          callback(Object.assign(new Error('Recipient address rejected: no such user'), { responseCode: 550 }));
        } else callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          peer.dataArrived++;
          peer.checkWaiters();
          (options.holdData?.() ?? Promise.resolve())
            .then(() => simpleParser(raw))
            .then((parsed) => {
              const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
              peer.messages.push({
                envelope: { from, to: session.envelope.rcptTo.map((r) => r.address) },
                parsed,
                raw,
                receivedAt: performance.now(),
                connectionId: session.id,
              });
              peer.checkWaiters();
              callback();
            })
            .catch((error: Error) => callback(error));
        });
      },
    };
    const server = new SMTPServer(config);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const address = (server as unknown as { server: { address(): AddressInfo } }).server.address();
    peer = new SmtpPeer(server, address.port);
    for (const a of options.refuseRecipients ?? []) peer.refused.add(a.toLowerCase());
    peer.deferRecipients = options.deferFirstRecipients ?? 0;
    return peer;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  waitForMessages(count: number): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ count, resolve });
      this.checkWaiters();
    });
  }

  /** Resolves once the data of `count` messages has arrived (before holdData lets them be recorded). */
  waitForData(count: number): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ count, resolve, data: true });
      this.checkWaiters();
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private checkWaiters(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if ((this.waiters[i]!.data === true ? this.dataArrived : this.messages.length) >= this.waiters[i]!.count) {
        this.waiters.splice(i, 1)[0]!.resolve();
      }
    }
  }
}

/** A loopback port with nothing listening: connections are refused. */
export async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
