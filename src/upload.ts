/** A file uploaded with a multipart request; kept in memory (bounded by --max-body-size). */
export interface Upload {
  readonly fieldName: string;
  readonly filename: string;
  readonly contentType: string;
  readonly content: Buffer;
}
