// Request bodies (--max-body-size: README.md, "Serve the example"; refused bodies:
// docs/behaviour.md, "`serve`"; uploads and --max-inflight-body-size: docs/behaviour.md,
// "Request bodies and uploads"): read as a stream, counted as they arrive, and abandoned as soon
// as a limit is crossed so a large body costs nothing more. This module decides whether a body
// is read at all (length, content type, room in the process's budget) and hands it to its
// reader: body-whole.ts for forms and JSON, body-multipart.ts for multipart. Every chunk is
// charged to the budget (body-budget.ts) before it is parsed.

import type { IncomingMessage } from 'node:http';
import { RequestUploads } from '../upload.js';
import type { ValueMap } from '../runtime/urlencoded.js';
import { BodyCharge } from './body-budget.js';
import { INCOMPLETE, mediaTypeOf, noRoom, tooLarge, unsupportedMediaType, type BodyIntake, type BodyResult } from './body-intake.js';
import { readMultipart } from './body-multipart.js';
import { readWhole } from './body-whole.js';

/** Room a multipart or chunked body takes from the budget before its first byte is read. */
const ADVANCE_BYTES = 64 * 1024;

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

  const mediaType = mediaTypeOf(headers['content-type'] ?? '');
  const multipart = mediaType === 'multipart/form-data';
  if (!multipart && mediaType !== 'application/x-www-form-urlencoded' && mediaType !== 'application/json') return unsupportedMediaType(mediaType);

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
