// A multipart/form-data body, parsed by busboy as it arrives: fields into the request's
// parameters, files kept only when a task of the endpoint reads uploads, in memory up to
// MEMORY_UPLOAD_BYTES and streamed to a temporary file (spool.ts) beyond it. For an endpoint
// that keeps the raw body, the bytes are kept beside the parsing as they arrive (body-raw.ts).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createWriteStream, type WriteStream } from 'node:fs';
import busboy from 'busboy';
import { RequestUploads, type Upload } from '../upload.js';
import type { ValueMap } from '../runtime/urlencoded.js';
import { BODY_RETRY_AFTER_S, type BodyCharge } from './body-budget.js';
import { ChargedChunks } from './body-chunks.js';
import type { BodyIntake, BodyResult, Refusal } from './body-intake.js';
import { KeptBody, RAW_STORAGE_FAILED } from './body-raw.js';
import type { RawBody } from '../upload.js';

export const MAX_UPLOADS = 20;
/** An upload up to this size stays in memory; a larger one goes to a temporary file. */
export const MEMORY_UPLOAD_BYTES = 64 * 1024;

const STORAGE_FAILED: Refusal = {
  ok: false,
  status: 503,
  detail: 'an uploaded file could not be stored; try again later',
  retryAfterSeconds: BODY_RETRY_AFTER_S,
};

/**
 * One uploaded file being received: its first MEMORY_UPLOAD_BYTES in memory, the rest streamed
 * to a temporary file opened once it grows beyond that. Bytes written to the file leave the
 * budget as soon as the write is done. While a write is pending the request itself is paused
 * (`block`), not only the part: the chunks the parser and the request would otherwise buffer
 * meanwhile cost memory per upload in flight (docs/performance.md, "P8").
 */
class IncomingFile {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private file: WriteStream | null = null;
  private path: string | null = null;
  /** Paused until the file drains. */
  private waiting = false;
  /** Settles when the file is complete on disk (at once for a file kept in memory); false when it failed. */
  stored: Promise<boolean> = Promise.resolve(true);

  constructor(
    private readonly stream: NodeJS.ReadableStream,
    private readonly intake: BodyIntake,
    private readonly charge: BodyCharge,
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
      if (this.size <= MEMORY_UPLOAD_BYTES) return;
      this.open();
      for (const held of this.chunks.splice(0)) this.write(held);
      return;
    }
    this.write(chunk);
  }

  /** The part ended: the upload, once `stored` settles. */
  end(fieldName: string, filename: string, contentType: string): Upload {
    if (this.file === null) {
      const content = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
      return { fieldName, filename, contentType, size: this.size, source: { kind: 'buffer', content } };
    }
    this.file.end();
    return { fieldName, filename, contentType, size: this.size, source: { kind: 'file', path: this.path! } };
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
    this.path = this.intake.spool.newFile();
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
      this.stream.resume();
      this.unblock();
    });
  }

  private write(chunk: Buffer): void {
    const more = this.file!.write(chunk, (error) => {
      if (!error) this.charge.left(chunk.length);
    });
    if (more || this.waiting) return;
    this.waiting = true;
    this.stream.pause();
    this.block();
  }
}

/** `rawType`: the Content-Type to keep the raw body with (the endpoint keeps it), else null. */
export function readMultipart(
  request: IncomingMessage,
  response: ServerResponse,
  into: ValueMap,
  intake: BodyIntake,
  charge: BodyCharge,
  keepUploads: boolean,
  rawType: string | null = null,
): Promise<BodyResult> {
  const { maxBytes, spool } = intake;
  return new Promise((resolve) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: request.headers,
        defParamCharset: 'utf8',
        // The byte count below is the real limit; busboy's own per-part limits must not cut earlier.
        limits: { files: MAX_UPLOADS, fileSize: maxBytes, fieldSize: maxBytes },
      });
    } catch (error) {
      resolve({ ok: false, status: 400, detail: `malformed multipart body: ${(error as Error).message}` });
      return;
    }
    const uploads: Upload[] = [];
    const files: IncomingFile[] = [];
    // Every file part's field, kept or dropped: a honeypot sent as a file is still filled (runtime/pipeline.ts).
    const fileFields = new Set<string>();
    let done = false;
    // Reasons the request is paused: the parser's back-pressure, a file's pending write, a wait for budget.
    let blocked = 0;
    const block = () => {
      if (blocked++ === 0) request.pause();
    };
    const unblock = () => {
      if (--blocked === 0 && !done) request.resume();
    };
    const stopReading = () => {
      reading.stop();
      request.unpipe();
    };
    const finish = (result: BodyResult) => {
      if (done) return;
      done = true;
      stopReading();
      if (result.ok) return resolve(result);
      parser.destroy();
      // Removed once closed: a file still being opened would otherwise be created after its removal.
      const paths = temporaryPaths();
      void Promise.all([...files.map((f) => f.abandon()), kept?.abandon()]).then(() => spool.remove(paths));
      resolve(result);
    };
    const temporaryPaths = () => [...files.map((f) => f.tempPath), kept?.tempPath ?? null].filter((p): p is string => p !== null);
    // The raw bytes, beside the parsing; the memory is accounted for as the parts are (the raw
    // copy in memory is the same buffers, at most MEMORY_RAW_BYTES of them).
    const kept = rawType === null ? null : new KeptBody(spool, null, () => finish(RAW_STORAGE_FAILED), block, unblock);
    let raw: RawBody | null = null;

    parser.on('field', (name, value) => {
      const list = into.get(name);
      if (list === undefined) into.set(name, [value]);
      else list.push(value);
    });
    parser.on('file', (fieldName, stream, info) => {
      // A body cut off mid-file (the client gone, a limit crossed) makes busboy fail the part's
      // stream as it is destroyed; the request is refused by finish() already, and an 'error'
      // nobody listens to would be an uncaught exception that stops the process.
      stream.on('error', () => {});
      if (!keepUploads) {
        // No task of the endpoint reads uploads: the bytes leave memory as they arrive.
        let size = 0;
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          charge.left(chunk.length);
        });
        stream.on('end', () => {
          if (info.filename !== undefined || size > 0) fileFields.add(fieldName);
        });
        return;
      }
      const file = new IncomingFile(stream, intake, charge, () => finish(STORAGE_FAILED), block, unblock);
      files.push(file);
      stream.on('data', (chunk: Buffer) => file.data(chunk));
      stream.on('end', () => {
        const upload = file.end(fieldName, info.filename ?? fieldName, info.mimeType);
        // A browser sends an empty file input as a nameless, empty part: nothing was uploaded.
        if (info.filename === undefined && upload.size === 0) return;
        uploads.push(upload);
        fileFields.add(fieldName);
      });
    });
    parser.on('filesLimit', () => finish({ ok: false, status: 413, detail: `more than ${MAX_UPLOADS} files were uploaded in one request` }));
    parser.on('error', (error: Error) => finish({ ok: false, status: 400, detail: `malformed multipart body: ${error.message}` }));
    parser.on('close', () => {
      if (done) return;
      stopReading();
      void Promise.all([...files.map((f) => f.stored), kept?.stored ?? true]).then((stored) => {
        if (!stored.every(Boolean)) return finish(kept !== null && stored[stored.length - 1] === false ? RAW_STORAGE_FAILED : STORAGE_FAILED);
        const paths = temporaryPaths();
        finish({
          ok: true,
          uploads: new RequestUploads(
            uploads,
            () => {
              spool.remove(paths);
              charge.release();
            },
            fileFields,
            raw,
          ),
        });
      });
    });
    const reading = new ChargedChunks(request, response, intake, charge, {
      chunk: (chunk) => {
        kept?.data(chunk);
        if (!parser.write(chunk)) {
          block();
          parser.once('drain', unblock);
        }
      },
      end: () => {
        if (kept !== null) raw = kept.end(rawType!);
        parser.end();
      },
      refused: finish,
      pause: block,
      resume: unblock,
    });
  });
}
