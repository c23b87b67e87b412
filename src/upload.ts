// Files uploaded with a multipart request, as the tasks see them. Only endpoints with a task that
// reads uploads keep them at all (runtime/loaded.ts); a small file stays in memory, a larger one
// is streamed to a temporary file while it arrives (server/body/spool.ts) and read from there when it
// is used, so a request's uploads cost little memory however long its tasks take.

/** Where kept bytes are (an upload's, or a raw request body's): in memory (a small one) or in a temporary file. */
export type UploadSource = { readonly kind: 'buffer'; readonly content: Buffer } | { readonly kind: 'file'; readonly path: string };

/** A file uploaded with a multipart request. */
export interface Upload {
  readonly fieldName: string;
  readonly filename: string;
  readonly contentType: string;
  /** Bytes. */
  readonly size: number;
  readonly source: UploadSource;
}

/**
 * The request body exactly as received, kept only for an endpoint that needs it (a task forwards
 * it: Endpoint.keepsRequestBody). A form or JSON body collected whole is this very buffer; any
 * other body stays in memory up to 64 KiB and is streamed to a temporary file beyond it.
 */
export interface RawBody {
  /** The request's Content-Type header as sent, parameters (charset) included. */
  readonly contentType: string;
  /** Bytes. */
  readonly size: number;
  readonly source: UploadSource;
}

const NO_FILES: readonly Upload[] = [];
const NO_FIELDS: ReadonlySet<string> = new Set();
const NOTHING_TO_RELEASE = (): void => {};

/**
 * The uploads (and the raw body, when kept) one request kept for its tasks, and what keeps them: temporary files, memory
 * counted against --max-inflight-body-size. Whoever still needs them after the request's
 * handler is done takes a hold (the task engine, for as long as the request's tasks run;
 * background runs included); when the last hold is released, `onReleased` removes the files and
 * gives the memory back. serve --queue copies them into the sealed job while the request is
 * decided, under the request's own hold, so a queued run needs no hold and no file outlives
 * the request's holds.
 */
export class RequestUploads {
  /** A request without a body, or whose body left nothing to keep. */
  static readonly NONE = new RequestUploads(NO_FILES, NOTHING_TO_RELEASE);

  private holds = 0;
  private released = false;

  constructor(
    readonly files: readonly Upload[],
    private readonly onReleased: () => void,
    /** The field names of every file part the request sent, kept or dropped (an empty, nameless part is no file). */
    private readonly fileFields: ReadonlySet<string> = NO_FIELDS,
    /** The body as received, for an endpoint that keeps it; released with the files. */
    readonly body: RawBody | null = null,
  ) {}

  /** Whether the request sent a file in the field `name` (kept or not). */
  sentFile(name: string): boolean {
    return this.fileFields.has(name);
  }

  /** Keeps the files until the returned function is called (once; later calls do nothing). */
  hold(): () => void {
    if (this.released) throw new Error('the uploads of this request were released already');
    this.holds++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--this.holds === 0 && this !== RequestUploads.NONE) {
        this.released = true;
        this.onReleased();
      }
    };
  }
}
