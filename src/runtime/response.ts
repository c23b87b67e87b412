// What the pipeline answers, independent of node:http. The server adapter writes it; a
// response that is never written (the request timed out, the client left, a task failed
// after the upstream was opened) must be released with `discardResponse`.

import type { Readable } from 'node:stream';
import type { FileHandle } from 'node:fs/promises';
import type { ParameterError } from './parameters.js';

export type RuntimeResponse =
  | { readonly kind: 'empty'; readonly status: number }
  | { readonly kind: 'redirect'; readonly status: number; readonly location: string }
  | {
      readonly kind: 'file';
      readonly status: number;
      readonly contentType: string;
      readonly file: FileHandle;
      readonly size: number;
      readonly downloadFilename: string | null;
    }
  | {
      readonly kind: 'stream';
      readonly status: number;
      readonly contentType: string;
      readonly stream: Readable;
      readonly downloadFilename: string | null;
    }
  | { readonly kind: 'body'; readonly status: number; readonly contentType: string; readonly body: string }
  /** The remembered answer of a deduplicated request, sent again with Idempotent-Replayed: true. */
  | { readonly kind: 'replay'; readonly status: number; readonly answer: RememberedAnswer }
  /** application/problem+json; `detail` and `errors` are safe for a client. */
  | {
      readonly kind: 'problem';
      readonly status: number;
      readonly detail: string;
      readonly errors?: readonly ParameterError[];
      /** Sent with it (Retry-After, RateLimit). */
      readonly headers?: Readonly<Record<string, string>>;
    };

/** What a replay answers with: the first answer's status, Location, Content-Type and body. */
export interface RememberedAnswer {
  readonly status: number;
  readonly location: string | null;
  readonly contentType: string | null;
  /** '' when the answer had none, or when it was streamed (a file, an upstream) or larger than 64 KiB (deduplication.ts). */
  readonly body: string;
  /** The request that got the answer first (absent in what a store kept before it was remembered). */
  readonly requestId?: string;
}

export function discardResponse(response: RuntimeResponse): void {
  if (response.kind === 'file') response.file.close().catch(() => {});
  else if (response.kind === 'stream') response.stream.destroy();
}

export function problem(status: number, detail: string, errors?: readonly ParameterError[]): RuntimeResponse {
  return errors === undefined ? { kind: 'problem', status, detail } : { kind: 'problem', status, detail, errors };
}
