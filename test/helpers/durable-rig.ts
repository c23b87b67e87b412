// The set-up the crash, drain and mail-crash suites share: the durable fixture served enqueue
// only (--no-queue-consume), its HTTP and SMTP peers, the store looked at directly, and the
// worker processes a test starts, all stopped afterwards.
import { HttpPeer } from './http-peer.js';
import { SmtpPeer, type SmtpPeerOptions } from './smtp-peer.js';
import { startServe, type RunningService } from './serve.js';
import { inspect, QUEUE_KEY, queueFixture, startWorker, type AvailableBackend, type RunningWorker, type StoreInspector } from './queue.js';

export class DurableRig {
  peer!: HttpPeer;
  smtp!: SmtpPeer;
  serve!: RunningService;
  store!: StoreInspector;
  private readonly workers: RunningWorker[] = [];

  constructor(
    private readonly backend: AvailableBackend,
    readonly name: string,
  ) {}

  /** `routes` sets up the HTTP peer before serve starts. */
  async start(routes: (peer: HttpPeer) => void, smtpOptions: SmtpPeerOptions = {}): Promise<void> {
    this.peer = await HttpPeer.start();
    routes(this.peer);
    this.smtp = await SmtpPeer.start(smtpOptions);
    this.store = inspect(this.backend, this.name);
    this.serve = await startServe(queueFixture('durable'), ['--queue', this.backend.url, '--queue-name', this.name, '--no-queue-consume', '--smtp-url', this.smtp.url], {
      PEER: this.peer.origin,
      ENDPOINT_SERVICE_QUEUE_KEY: QUEUE_KEY,
    });
  }

  /** A `worker` process on the fixture and the rig's peers, with `args` added. */
  worker(args: readonly string[]): RunningWorker {
    const w = startWorker(queueFixture('durable'), this.backend.url, this.name, ['--smtp-url', this.smtp.url, ...args], { PEER: this.peer.origin });
    this.workers.push(w);
    return w;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.stop('SIGKILL')));
    await this.serve?.stop();
    await this.peer?.close();
    await this.smtp?.close();
    await this.store?.close();
  }
}
