// Request bodies (--max-body-size: README.md, "Serve the example"; refused bodies:
// docs/behaviour.md, "`serve`"; uploads and --max-inflight-body-size: docs/behaviour.md,
// "Request bodies and uploads"): read as a stream, counted as they arrive, and abandoned as soon
// as a limit is crossed so a large body costs nothing more. Every chunk is charged to the
// process's body budget (body-budget.ts) before it is parsed; uploads no task of the endpoint
// reads are dropped as they arrive, the others are kept in memory up to MEMORY_UPLOAD_BYTES and
// streamed to a temporary file (spool.ts) beyond it.

import type { IncomingMessage } from 'node:http';
import { createWriteStream, type WriteStream } from 'node:fs';
import busboy from 'busboy';
import { RequestUploads, type Upload } from '../upload.js';
import { parseUrlEncoded, type ValueMap } from '../runtime/urlencoded.js';
import { BODY_RETRY_AFTER_S, BodyCharge, type BodyBudget } from './body-budget.js';
import type { UploadSpool } from './spool.js';

export const MAX_UPLOADS = 20;
/** An upload up to this size stays in memory; a larger one goes to a temporary file. */
export const MEMORY_UPLOAD_BYTES = 64 * 1024;
/** Room a multipart or chunked body takes from the budget before its first byte is read. */
const ADVANCE_BYTES = 64 * 1024;

/** What reading bodies needs of the process: its limits, its budget and its temporary folder. */
export interface BodyIntake {
  readonly maxBytes: number;
  readonly budget: BodyBudget;
  readonly spool: UploadSpool;
}

export type BodyResult =
  | { readonly ok: true; readonly uploads: RequestUploads }
  | { readonly ok: false; readonly status: number; readonly detail: string; readonly retryAfterSeconds?: number };

type Refusal = Extract<BodyResult, { ok: false }>;

const utf8 = new TextDecoder('utf-8', { fatal: true });

function tooLarge(max: number): Refusal {
  return { ok: false, status: 413, detail: `the request body is larger than the limit of ${max} bytes` };
}

function noRoom(budget: BodyBudget): Refusal {
  budget.countRefusal();
  return { ok: false, status: 503, detail: 'the service is receiving too many request bodies at the moment; try again shortly', retryAfterSeconds: BODY_RETRY_AFTER_S };
}

const INCOMPLETE: Refusal = { ok: false, status: 400, detail: 'the request body was not received completely' };

/**
 * Adds the body's parameters to `into`; `keepUploads`: whether a task of the endpoint may use
 * uploaded files (else they are dropped as they arrive). On success the body's uploads hold its
 * memory and temporary files until released (upload.ts); on a refusal nothing is left held.
 */
export function readBody(request: IncomingMessage, into: ValueMap, intake: BodyIntake, keepUploads: boolean): Promise<BodyResult> | BodyResult {
  const headers = request.headers;
  const length = headers['content-length'];
  const chunked = headers['transfer-encoding'] !== undefined;
  const maxBytes = intake.maxBytes;
  if (!chunked && (length === undefined || length === '0')) return { ok: true, uploads: RequestUploads.NONE };
  if (length !== undefined && Number(length) > maxBytes) return tooLarge(maxBytes);

  const contentType = headers['content-type'] ?? '';
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  const multipart = mediaType === 'multipart/form-data';
  if (!multipart && mediaType !== 'application/x-www-form-urlencoded' && mediaType !== 'application/json') {
    return {
      ok: false,
      status: 415,
      detail: `${mediaType === '' ? 'a request body without a content type' : `content type "${mediaType}"`} is not supported: send application/x-www-form-urlencoded, multipart/form-data or application/json`,
    };
  }

  // A form or JSON body is held whole, so it takes its declared length at once; a multipart body
  // holds little beyond its parameters and small files, so it starts small and asks as it goes.
  const declared = chunked || length === undefined ? null : Number(length);
  const advance = multipart || declared === null ? Math.min(declared ?? ADVANCE_BYTES, ADVANCE_BYTES) : declared;
  const charge = new BodyCharge(intake.budget);
  const read = (): Promise<BodyResult> => {
    const result = multipart ? readMultipart(request, into, intake, charge, keepUploads) : readWhole(request, into, mediaType, intake, charge);
    return result.then((body) => {
      if (body.ok) return body;
      charge.release();
      return body;
    });
  };
  const admitted = charge.admit(advance);
  if (admitted === true) return read();
  return admitted.then((ok) => {
    if (!ok) return noRoom(intake.budget);
    // The client may have gone while the body waited: nothing would ever arrive.
    if (request.destroyed) return (charge.release(), INCOMPLETE);
    return read();
  });
}

/** A form or JSON body, held whole; its memory stays charged until the request's uploads are released. */
async function readWhole(request: IncomingMessage, into: ValueMap, mediaType: string, intake: BodyIntake, charge: BodyCharge): Promise<BodyResult> {
  const body = await collect(request, intake, charge);
  if (!body.ok) return body;
  charge.settle();
  const problem = mediaType === 'application/json' ? readJson(body.bytes, into) : readForm(body.bytes, into);
  return problem ?? { ok: true, uploads: new RequestUploads([], () => charge.release()) };
}

function decode(bytes: Buffer): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

type Collected = { readonly ok: true; readonly bytes: Buffer } | Refusal;

function collect(request: IncomingMessage, intake: BodyIntake, charge: BodyCharge): Promise<Collected> {
  const { maxBytes, budget } = intake;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    // A chunk waiting for room; the end of the body, if it came meanwhile, waits for it.
    let waiting = false;
    let ended = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return stop(tooLarge(maxBytes));
      chunks.push(chunk);
      const granted = charge.arrived(chunk.length);
      if (granted === true) return;
      waiting = true;
      request.pause();
      void granted.then((ok) => {
        waiting = false;
        if (done) return;
        if (!ok) return stop(noRoom(budget));
        if (ended) return onEnd();
        request.resume();
      });
    };
    const onEnd = () => {
      ended = true;
      if (!waiting) stop({ ok: true, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    };
    const onError = () => stop(INCOMPLETE);
    const stop = (result: Collected) => {
      if (done) return;
      done = true;
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('aborted', onError);
      request.pause();
      resolve(result);
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('aborted', onError);
  });
}

function readForm(bytes: Buffer, into: ValueMap): Refusal | null {
  const text = decode(bytes);
  if (text === null) return { ok: false, status: 400, detail: 'malformed form body: it is not valid UTF-8' };
  const problem = parseUrlEncoded(text, into, 'form body');
  return problem === null ? null : { ok: false, status: 400, detail: problem };
}

const JSON_SHAPE = 'the JSON body must be an object whose values are strings, numbers, booleans or arrays of those';

function readJson(bytes: Buffer, into: ValueMap): Refusal | null {
  const text = decode(bytes);
  if (text === null) return { ok: false, status: 400, detail: 'malformed JSON body: it is not valid UTF-8' };
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return { ok: false, status: 400, detail: `malformed JSON body: ${(error as Error).message}` };
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) return { ok: false, status: 400, detail: JSON_SHAPE };
  for (const [name, value] of Object.entries(document)) {
    const values: string[] = [];
    if (Array.isArray(value)) {
      for (const item of value) {
        const text = scalar(item);
        if (text === null) return { ok: false, status: 400, detail: `${JSON_SHAPE}; "${name}" holds an array with a ${describe(item)}` };
        values.push(text);
      }
    } else {
      const text = scalar(value);
      if (text === null) return { ok: false, status: 400, detail: `${JSON_SHAPE}; "${name}" is ${describe(value)}` };
      values.push(text);
    }
    const list = into.get(name);
    if (list === undefined) into.set(name, values);
    // A loop, not push(...values): a request can send more values than a call has room for arguments.
    else for (const v of values) list.push(v);
  }
  return null;
}

function scalar(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  return null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

const STORAGE_FAILED: Refusal = { ok: false, status: 503, detail: 'an uploaded file could not be stored; try again later', retryAfterSeconds: BODY_RETRY_AFTER_S };

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

function readMultipart(request: IncomingMessage, into: ValueMap, intake: BodyIntake, charge: BodyCharge, keepUploads: boolean): Promise<BodyResult> {
  const { maxBytes, budget, spool } = intake;
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
    let size = 0;
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
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('aborted', onAborted);
      request.off('error', onAborted);
      request.unpipe();
      request.pause();
    };
    const finish = (result: BodyResult) => {
      if (done) return;
      done = true;
      stopReading();
      if (result.ok) return resolve(result);
      parser.destroy();
      // Removed once closed: a file still being opened would otherwise be created after its removal.
      const paths = temporaryPaths();
      void Promise.all(files.map((f) => f.abandon())).then(() => spool.remove(paths));
      resolve(result);
    };
    const temporaryPaths = () => files.map((f) => f.tempPath).filter((p): p is string => p !== null);

    parser.on('field', (name, value) => {
      const list = into.get(name);
      if (list === undefined) into.set(name, [value]);
      else list.push(value);
    });
    parser.on('file', (fieldName, stream, info) => {
      if (!keepUploads) {
        // No task of the endpoint reads uploads: the bytes leave memory as they arrive.
        stream.on('data', (chunk: Buffer) => charge.left(chunk.length));
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
      });
    });
    parser.on('filesLimit', () => finish({ ok: false, status: 413, detail: `more than ${MAX_UPLOADS} files were uploaded in one request` }));
    parser.on('error', (error: Error) => finish({ ok: false, status: 400, detail: `malformed multipart body: ${error.message}` }));
    parser.on('close', () => {
      if (done) return;
      stopReading();
      void Promise.all(files.map((f) => f.stored)).then((stored) => {
        if (!stored.every(Boolean)) return finish(STORAGE_FAILED);
        charge.settle();
        const paths = temporaryPaths();
        finish({
          ok: true,
          uploads: new RequestUploads(uploads, () => {
            spool.remove(paths);
            charge.release();
          }),
        });
      });
    });
    const feed = (chunk: Buffer) => {
      if (!parser.write(chunk)) {
        block();
        parser.once('drain', unblock);
      }
    };
    // A chunk waiting for room; the end of the body, if it came meanwhile, waits for it.
    let waiting = false;
    let ended = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return finish(tooLarge(maxBytes));
      const granted = charge.arrived(chunk.length);
      if (granted === true) return feed(chunk);
      waiting = true;
      block();
      void granted.then((ok) => {
        waiting = false;
        if (done) return;
        if (!ok) return finish(noRoom(budget));
        feed(chunk);
        if (ended) parser.end();
        unblock();
      });
    };
    const onEnd = () => {
      ended = true;
      if (!waiting) parser.end();
    };
    const onAborted = () => finish(INCOMPLETE);
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('aborted', onAborted);
    request.on('error', onAborted);
  });
}
