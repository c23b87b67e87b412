// Live updates of the list (server-sent events): while at least one page listens, the store is
// asked every second for the deliveries of the last minute, and each one new or changed since
// it was last sent (a task that ended) goes to every listener as a rendered row.

import type { ServerResponse } from 'node:http';
import type { DeliveryStore } from '../deliveries/store.js';
import { row } from './pages.js';

const POLL_MS = 1000;
const WINDOW_MS = 60_000;
const HEARTBEAT_MS = 15_000;

export class LiveRows {
  private readonly listeners = new Set<ServerResponse>();
  /** What was last sent of each recent delivery, by id. */
  private sent = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private polling = false;

  constructor(private readonly store: DeliveryStore) {}

  listen(response: ServerResponse): void {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
    response.write('retry: 3000\n\n');
    this.listeners.add(response);
    response.on('close', () => {
      this.listeners.delete(response);
      if (this.listeners.size === 0) this.stop();
    });
    if (this.timer === null) {
      // What is on the page already is not sent again: the first poll only remembers.
      void this.poll(false);
      this.timer = setInterval(() => void this.poll(true), POLL_MS);
      this.heartbeat = setInterval(() => this.broadcast(': still here\n\n'), HEARTBEAT_MS);
    }
  }

  private stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    this.timer = this.heartbeat = null;
    this.sent.clear();
  }

  private async poll(send: boolean): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const since = Date.now() - WINDOW_MS;
      const records = await this.store.list({ since, limit: 200 });
      const next = new Map<string, string>();
      // Oldest first, so the newest ends up at the top of the page.
      for (const record of [...records].reverse()) {
        const shown = row(record).text;
        next.set(record.id, shown);
        if (send && this.sent.get(record.id) !== shown) this.broadcast(`event: delivery\ndata: ${JSON.stringify({ id: record.id, row: shown })}\n\n`);
      }
      this.sent = next;
    } catch {
      // The store is down for a moment: the next poll tries again; the page keeps what it shows.
    } finally {
      this.polling = false;
    }
  }

  private broadcast(text: string): void {
    for (const response of this.listeners) response.write(text);
  }

  close(): void {
    for (const response of this.listeners) response.end();
    this.listeners.clear();
    this.stop();
  }
}
