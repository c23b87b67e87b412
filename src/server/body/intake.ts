// What reading a request body needs and answers, shared by its readers (admission.ts,
// whole.ts, multipart.ts): the process's limits, budget and temporary folder, and the
// refusals a body can get (docs/behaviour.md, "Request bodies and uploads").

import type { RequestUploads } from '../../upload.js';
import type { JsonBody } from '../../runtime/sources.js';
import { BODY_RETRY_AFTER_S, type BodyBudget } from './budget.js';
import type { UploadSpool } from './spool.js';

/** What reading bodies needs of the process: its limits, its budget and its temporary folder. */
export interface BodyIntake {
  readonly maxBytes: number;
  readonly budget: BodyBudget;
  readonly spool: UploadSpool;
}

export type BodyResult =
  /** `json`: a JSON body's parsed document, for parameters that read it with a JSONPath. */
  | {
      readonly ok: true;
      readonly uploads: RequestUploads;
      readonly json?: JsonBody;
      /**
       * A kept raw body that does not parse as its type says (malformed JSON or form): refused
       * with this 400 once the body's <signature> is verified, so an unsigned or tampered
       * delivery is a 401 whatever its bytes.
       */
      readonly unparsed?: Refusal;
    }
  | { readonly ok: false; readonly status: number; readonly detail: string; readonly retryAfterSeconds?: number };

export type Refusal = Extract<BodyResult, { ok: false }>;

export function tooLarge(max: number): Refusal {
  return { ok: false, status: 413, detail: `the request body is larger than the limit of ${max} bytes` };
}

export function noRoom(budget: BodyBudget): Refusal {
  budget.countRefusal();
  return {
    ok: false,
    status: 503,
    detail: 'the service is receiving too many request bodies at the moment; try again shortly',
    retryAfterSeconds: BODY_RETRY_AFTER_S,
  };
}

export const INCOMPLETE: Refusal = { ok: false, status: 400, detail: 'the request body was not received completely' };

/** The media type of a Content-Type, lower-case, without parameters ("" without one). */
export function mediaTypeOf(contentType: string): string {
  const semicolon = contentType.indexOf(';');
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

/** A body of a type no parameter can be read from (for serve, and dry-run --body). */
export function unsupportedMediaType(mediaType: string): Refusal {
  return {
    ok: false,
    status: 415,
    detail: `${mediaType === '' ? 'a request body without a content type' : `content type "${mediaType}"`} is not supported: send application/x-www-form-urlencoded, multipart/form-data or application/json`,
  };
}
