// The request body kept exactly as received, for an endpoint whose tasks forward it
// (Endpoint.keepsRequestBody). A form or JSON body is collected whole anyway, and that buffer is
// the raw body (whole.ts); here are the others: a multipart body beside its parsing
// (multipart.ts), and a body of any other type, which nothing parses (readRaw). Either is
// held in memory up to MEMORY_SPOOL_BYTES and streamed to a temporary file (spool.ts) beyond it,
// so a large body is not held in memory while its tasks run; the file goes when the request's
// last hold is released (upload.ts), or at once when the body is refused.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestUploads, type RawBody } from '../../upload.js';
import { BODY_RETRY_AFTER_S, type BodyCharge } from './budget.js';
import { ChargedChunks } from './chunks.js';
import type { BodyIntake, BodyResult, Refusal } from './intake.js';
import { SpooledBytes } from './spooled-bytes.js';
import { readPauses } from './read-pauses.js';

export const RAW_STORAGE_FAILED: Refusal = {
  ok: false,
  status: 503,
  detail: 'the request body could not be stored; try again later',
  retryAfterSeconds: BODY_RETRY_AFTER_S,
};

/** A body of a type no parameter is read from, kept raw for the endpoint's tasks. */
export function readRaw(request: IncomingMessage, response: ServerResponse, intake: BodyIntake, charge: BodyCharge, contentType: string): Promise<BodyResult> {
  const spool = intake.spool;
  return new Promise((resolve) => {
    let done = false;
    // Reasons the request is paused: a pending write to the file, a wait for budget.
    const { block, unblock } = readPauses(request, () => done);
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
    const kept = new SpooledBytes(spool, charge, () => finish(RAW_STORAGE_FAILED), block, unblock);
    const reading: ChargedChunks = new ChargedChunks(request, response, intake, charge, {
      chunk: (chunk) => kept.data(chunk),
      end: () => {
        const body: RawBody = { contentType, ...kept.end() };
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
