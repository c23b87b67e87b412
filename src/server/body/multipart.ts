// A multipart/form-data body, parsed by busboy as it arrives: fields into the request's
// parameters, files kept only when a task of the endpoint reads uploads, in memory up to
// MEMORY_UPLOAD_BYTES and streamed to a temporary file (spool.ts) beyond it. For an endpoint
// that keeps the raw body, the bytes are kept beside the parsing as they arrive (raw.ts).

import type { IncomingMessage, ServerResponse } from 'node:http';
import busboy from 'busboy';
import { RequestUploads, type Upload } from '../../upload.js';
import type { ValueMap } from '../../runtime/urlencoded.js';
import { BODY_RETRY_AFTER_S, type BodyCharge } from './budget.js';
import { ChargedChunks } from './chunks.js';
import type { BodyIntake, BodyResult, Refusal } from './intake.js';
import { RAW_STORAGE_FAILED } from './raw.js';
import { MEMORY_SPOOL_BYTES, SpooledBytes } from './spooled-bytes.js';
import type { RawBody } from '../../upload.js';
import { readPauses } from './read-pauses.js';

export const MAX_UPLOADS = 20;
/** An upload up to this size stays in memory; a larger one goes to a temporary file. */
export const MEMORY_UPLOAD_BYTES = MEMORY_SPOOL_BYTES;

const STORAGE_FAILED: Refusal = {
  ok: false,
  status: 503,
  detail: 'an uploaded file could not be stored; try again later',
  retryAfterSeconds: BODY_RETRY_AFTER_S,
};

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
    const files: SpooledBytes[] = [];
    // Every file part's field, kept or dropped: a honeypot sent as a file is still filled (runtime/pipeline.ts).
    const fileFields = new Set<string>();
    let done = false;
    // Reasons the request is paused: the parser's back-pressure, a file's pending write, a wait for budget.
    const { block, unblock } = readPauses(request, () => done);
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
    // copy in memory is the same buffers, at most MEMORY_SPOOL_BYTES of them).
    const kept = rawType === null ? null : new SpooledBytes(spool, null, () => finish(RAW_STORAGE_FAILED), block, unblock);
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
      // While a write to its file is pending, the part and the request are both paused: the
      // chunks the parser and the request would otherwise buffer meanwhile cost memory per upload
      // in flight (docs/performance-log.md, "P8").
      const file = new SpooledBytes(
        spool,
        charge,
        () => finish(STORAGE_FAILED),
        () => (stream.pause(), block()),
        () => (stream.resume(), unblock()),
      );
      files.push(file);
      stream.on('data', (chunk: Buffer) => file.data(chunk));
      stream.on('end', () => {
        const upload: Upload = { fieldName, filename: info.filename ?? fieldName, contentType: info.mimeType, ...file.end() };
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
        if (kept !== null) raw = { contentType: rawType!, ...kept.end() };
        parser.end();
      },
      refused: finish,
      pause: block,
      resume: unblock,
    });
  });
}
