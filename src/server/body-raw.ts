// The request body kept exactly as received, for an endpoint whose tasks forward it
// (Endpoint.keepsRequestBody). A form or JSON body is collected whole anyway, and that buffer is
// the raw body (body-whole.ts); here are the others: a multipart body beside its parsing
// (body-multipart.ts), and a body of any other type, which nothing parses (readRaw). Either is
// held in memory up to MEMORY_RAW_BYTES and streamed to a temporary file (spool.ts) beyond it,
// so a large body is not held in memory while its tasks run; the file goes when the request's
// last hold is released (upload.ts), or at once when the body is refused.

import { createWriteStream, type WriteStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestUploads, type RawBody } from '../upload.js';
import { BODY_RETRY_AFTER_S, type BodyCharge } from './body-budget.js';
import { ChargedChunks } from './body-chunks.js';
import type { BodyIntake, BodyResult, Refusal } from './body-intake.js';
import type { UploadSpool } from './spool.js';

/** A raw body up to this size stays in memory; a larger one goes to a temporary file (as uploads do). */
export const MEMORY_RAW_BYTES = 64 * 1024;

export const RAW_STORAGE_FAILED: Refusal = {
  ok: false,
  status: 503,
  detail: 'the request body could not be stored; try again later',
  retryAfterSeconds: BODY_RETRY_AFTER_S,
};

/**
 * The bytes of one body as they arrive, in order. `charge`: the body's charge when the bytes
 * written to the file leave the budget here (a body nothing else reads); null when the reader
 * beside it accounts for the memory (multipart).
 */
export class KeptBody {
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
      if (this.size <= MEMORY_RAW_BYTES) return;
      this.open();
      for (const held of this.chunks.splice(0)) this.write(held);
      return;
    }
    this.write(chunk);
  }

  /** The body ended: what was kept, once `stored` settles. */
  end(contentType: string): RawBody {
    if (this.file === null) {
      const content = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
      return { contentType, size: this.size, source: { kind: 'buffer', content } };
    }
    this.file.end();
    return { contentType, size: this.size, source: { kind: 'file', path: this.path! } };
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

/** A body of a type no parameter is read from, kept raw for the endpoint's tasks. */
export function readRaw(request: IncomingMessage, response: ServerResponse, intake: BodyIntake, charge: BodyCharge, contentType: string): Promise<BodyResult> {
  const spool = intake.spool;
  return new Promise((resolve) => {
    let done = false;
    // Reasons the request is paused: a pending write to the file, a wait for budget.
    let blocked = 0;
    const block = () => {
      if (blocked++ === 0) request.pause();
    };
    const unblock = () => {
      if (--blocked === 0 && !done) request.resume();
    };
    const finish = (result: BodyResult) => {
      if (done) return;
      done = true;
      reading.stop();
      if (!result.ok) {
        const path = kept.tempPath;
        void kept.abandon().then(() => spool.remove(path === null ? [] : [path]));
      }
      resolve(result);
    };
    const kept = new KeptBody(spool, charge, () => finish(RAW_STORAGE_FAILED), block, unblock);
    const reading: ChargedChunks = new ChargedChunks(request, response, intake, charge, {
      chunk: (chunk) => kept.data(chunk),
      end: () => {
        const body = kept.end(contentType);
        void kept.stored.then((ok) => {
          if (!ok) return finish(RAW_STORAGE_FAILED);
          const path = kept.tempPath;
          finish({
            ok: true,
            uploads: new RequestUploads(
              [],
              () => {
                if (path !== null) spool.remove([path]);
                charge.release();
              },
              undefined,
              body,
            ),
          });
        });
      },
      refused: finish,
      pause: block,
      resume: unblock,
    });
  });
}
