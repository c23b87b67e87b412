// Bytes received in order and kept: in memory up to MEMORY_SPOOL_BYTES, streamed to a temporary
// file (spool.ts) beyond it, so a large body or upload is not held in memory while its tasks
// run. One class for both an uploaded file (multipart.ts) and a raw body kept for
// forwarding (raw.ts).

import { createWriteStream, type WriteStream } from 'node:fs';
import type { UploadSource } from '../../upload.js';
import type { BodyCharge } from './budget.js';
import type { UploadSpool } from './spool.js';

/** Bytes up to this size stay in memory; more go to a temporary file. */
export const MEMORY_SPOOL_BYTES = 64 * 1024;

/**
 * The bytes of one body as they arrive, in order. `charge`: the body's charge when the bytes
 * written to the file leave the budget here (a body nothing else reads); null when the reader
 * beside it accounts for the memory (multipart).
 */
export class SpooledBytes {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private file: WriteStream | null = null;
  private path: string | null = null;
  private waiting = false;
  /** Settles when the body is complete on disk (at once in memory); false when writing failed. */
  stored: Promise<boolean> = Promise.resolve(true);

  constructor(
    private readonly spool: UploadSpool,
    private readonly charge: BodyCharge | null,
    private readonly failed: () => void,
    private readonly block: () => void,
    private readonly unblock: () => void,
  ) {}

  get tempPath(): string | null {
    return this.path;
  }

  data(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.file === null) {
      this.chunks.push(chunk);
      if (this.size <= MEMORY_SPOOL_BYTES) return;
      this.open();
      for (const held of this.chunks.splice(0)) this.write(held);
      return;
    }
    this.write(chunk);
  }

  /** The bytes ended: what was kept, once `stored` settles. */
  end(): { readonly size: number; readonly source: UploadSource } {
    if (this.file === null) {
      const content = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
      return { size: this.size, source: { kind: 'buffer', content } };
    }
    this.file.end();
    return { size: this.size, source: { kind: 'file', path: this.path! } };
  }

  /** Stops writing (the body was refused); resolves once the file is closed, so it can be removed. */
  abandon(): Promise<void> {
    const file = this.file;
    if (file === null || file.closed) return Promise.resolve();
    return new Promise((resolve) => {
      file.once('close', () => resolve());
      file.destroy();
    });
  }

  private open(): void {
    this.path = this.spool.newFile();
    const file = createWriteStream(this.path, { flags: 'wx', mode: 0o600 });
    this.file = file;
    this.stored = new Promise((resolve) => {
      file.once('close', () => resolve(file.writableFinished));
      file.on('error', () => {
        resolve(false);
        this.failed();
      });
    });
    file.on('drain', () => {
      if (!this.waiting) return;
      this.waiting = false;
      this.unblock();
    });
  }

  private write(chunk: Buffer): void {
    const charge = this.charge;
    const more = this.file!.write(chunk, (error) => {
      if (!error && charge !== null) charge.left(chunk.length);
    });
    if (more || this.waiting) return;
    this.waiting = true;
    this.block();
  }
}
