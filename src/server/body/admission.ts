// Request bodies (--max-body-size: docs/serve.md, "Options"; refused bodies:
// docs/behaviour.md, "`serve`"; uploads and --max-inflight-body-size: docs/behaviour.md,
// "Request bodies and uploads"): read as a stream, counted as they arrive, and abandoned as soon
// as a limit is crossed so a large body costs nothing more. This module decides whether a body
// is read at all (length, content type, room in the process's budget) and hands it to its
// reader: whole.ts for forms and JSON, multipart.ts for multipart, raw.ts for any
// other type when the endpoint keeps the raw body. Every chunk is charged to the budget
// (budget.ts) before it is parsed.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestUploads } from '../../upload.js';
import type { ValueMap } from '../../runtime/urlencoded.js';
import { BodyCharge } from './budget.js';
import { INCOMPLETE, mediaTypeOf, tooLarge, unsupportedMediaType, type BodyIntake, type BodyResult } from './intake.js';
import { readMultipart } from './multipart.js';
import { readWhole } from './whole.js';
import { readRaw } from './raw.js';
import type { BodyKeeping } from '../../runtime/loaded.js';

/**
 * Adds the body's parameters to `into`; `keep.uploads`: whether a task of the endpoint may use
 * uploaded files (else they are dropped as they arrive); `keep.raw`: whether the body is kept as
 * received (a task forwards it), in which case any content type is read; `client`: the client's address, whose
 * share of the budget the body is charged to. On success the body's uploads hold its memory and
 * temporary files until released (upload.ts); on a refusal, or when the request ends before its
 * body (the response closes: answered, timed out, the client gone), nothing is left held.
 */
export function readBody(
  request: IncomingMessage,
  response: ServerResponse,
  into: ValueMap,
  intake: BodyIntake,
  keep: BodyKeeping,
  client: string,
  jsonPaths: readonly string[] = [],
): Promise<BodyResult> | BodyResult {
  const headers = request.headers;
  const length = headers['content-length'];
  const chunked = headers['transfer-encoding'] !== undefined;
  const maxBytes = intake.maxBytes;
  if (!chunked && (length === undefined || length === '0')) return { ok: true, uploads: RequestUploads.NONE };
  if (length !== undefined && Number(length) > maxBytes) return tooLarge(maxBytes);

  const contentType = headers['content-type'] ?? '';
  const mediaType = mediaTypeOf(contentType);
  const multipart = mediaType === 'multipart/form-data';
  const parsed = multipart || mediaType === 'application/x-www-form-urlencoded' || mediaType === 'application/json';
  if (!parsed && !keep.raw) return unsupportedMediaType(mediaType);
  // Answered already (timed out while its rate limits were counted) or the client gone: no reader would ever end.
  if (response.writableEnded || response.destroyed) return INCOMPLETE;

  // Nothing is charged before a byte arrives: a declared length is only a claim (budget.ts).
  const charge = new BodyCharge(intake.budget, client);
  const rawType = keep.raw ? contentType : null;
  const result = multipart
    ? readMultipart(request, response, into, intake, charge, keep.uploads, rawType)
    : parsed
      ? readWhole(request, response, into, mediaType, intake, charge, rawType, jsonPaths)
      : readRaw(request, response, intake, charge, contentType);
  return result.then((body) => {
    if (!body.ok) charge.release();
    return body;
  });
}
