// Request bodies (--max-body-size: README.md, "Serve the example"; refused bodies:
// docs/behaviour.md, "`serve`"): read as a stream, counted as they arrive, and abandoned as
// soon as a limit is crossed so a large body costs nothing more.

import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { RequestUploads, type Upload } from '../upload.js';
import { parseUrlEncoded, type ValueMap } from '../runtime/urlencoded.js';

export const MAX_UPLOADS = 20;

export type BodyResult = { readonly ok: true; readonly uploads: RequestUploads } | { readonly ok: false; readonly status: number; readonly detail: string };

const OK: BodyResult = { ok: true, uploads: RequestUploads.NONE };
const utf8 = new TextDecoder('utf-8', { fatal: true });

function tooLarge(max: number): BodyResult {
  return { ok: false, status: 413, detail: `the request body is larger than the limit of ${max} bytes` };
}

/**
 * Adds the body's parameters to `into`; `keepUploads`: whether a task of the endpoint may use
 * uploaded files, else they are dropped as they arrive.
 */
export function readBody(request: IncomingMessage, into: ValueMap, maxBytes: number, keepUploads: boolean): Promise<BodyResult> | BodyResult {
  const headers = request.headers;
  const length = headers['content-length'];
  const chunked = headers['transfer-encoding'] !== undefined;
  if (!chunked && (length === undefined || length === '0')) return OK;
  if (length !== undefined && Number(length) > maxBytes) return tooLarge(maxBytes);

  const contentType = headers['content-type'] ?? '';
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  switch (mediaType) {
    case 'application/x-www-form-urlencoded':
      return collect(request, maxBytes).then((body) => {
        if (!body.ok) return body;
        const text = decode(body.bytes);
        if (text === null) return { ok: false, status: 400, detail: 'malformed form body: it is not valid UTF-8' };
        const problem = parseUrlEncoded(text, into, 'form body');
        return problem === null ? OK : { ok: false, status: 400, detail: problem };
      });
    case 'application/json':
      return collect(request, maxBytes).then((body) => (body.ok ? readJson(body.bytes, into) : body));
    case 'multipart/form-data':
      return readMultipart(request, into, maxBytes, keepUploads);
    default:
      return {
        ok: false,
        status: 415,
        detail: `${mediaType === '' ? 'a request body without a content type' : `content type "${mediaType}"`} is not supported: send application/x-www-form-urlencoded, multipart/form-data or application/json`,
      };
  }
}

function decode(bytes: Buffer): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

type Collected = { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly status: number; readonly detail: string };

function collect(request: IncomingMessage, maxBytes: number): Promise<Collected> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        stop();
        resolve(tooLarge(maxBytes) as Collected);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve({ ok: true, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    };
    const onError = () => {
      stop();
      resolve({ ok: false, status: 400, detail: 'the request body was not received completely' });
    };
    const stop = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('aborted', onError);
      request.pause();
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('aborted', onError);
  });
}

const JSON_SHAPE = 'the JSON body must be an object whose values are strings, numbers, booleans or arrays of those';

function readJson(bytes: Buffer, into: ValueMap): BodyResult {
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
  return OK;
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

function readMultipart(request: IncomingMessage, into: ValueMap, maxBytes: number, keepUploads: boolean): Promise<BodyResult> {
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
    let size = 0;
    let done = false;
    const finish = (result: BodyResult) => {
      if (done) return;
      done = true;
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('aborted', onAborted);
      request.off('error', onAborted);
      request.unpipe();
      request.pause();
      if (!result.ok) parser.destroy();
      resolve(result);
    };
    parser.on('field', (name, value) => {
      const list = into.get(name);
      if (list === undefined) into.set(name, [value]);
      else list.push(value);
    });
    parser.on('file', (fieldName, stream, info) => {
      if (!keepUploads) {
        // No task of the endpoint reads uploads: nothing is kept of the file.
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      let fileSize = 0;
      stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        fileSize += chunk.length;
      });
      stream.on('end', () => {
        // A browser sends an empty file input as a nameless, empty part: nothing was uploaded.
        if (info.filename === undefined && fileSize === 0) return;
        const content = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, fileSize);
        uploads.push({ fieldName, filename: info.filename ?? fieldName, contentType: info.mimeType, size: fileSize, source: { kind: 'buffer', content } });
      });
    });
    parser.on('filesLimit', () => finish({ ok: false, status: 413, detail: `more than ${MAX_UPLOADS} files were uploaded in one request` }));
    parser.on('error', (error: Error) => finish({ ok: false, status: 400, detail: `malformed multipart body: ${error.message}` }));
    parser.on('close', () => finish({ ok: true, uploads: uploads.length === 0 ? RequestUploads.NONE : new RequestUploads(uploads, () => {}) }));
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        finish(tooLarge(maxBytes));
        return;
      }
      if (!parser.write(chunk)) {
        request.pause();
        parser.once('drain', () => {
          if (!done) request.resume();
        });
      }
    };
    const onEnd = () => parser.end();
    const onAborted = () => finish({ ok: false, status: 400, detail: 'the request body was not received completely' });
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('aborted', onAborted);
    request.on('error', onAborted);
  });
}
