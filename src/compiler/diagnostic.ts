export type Severity = 'error' | 'warning';

/** A problem of the configuration: data, raised through one helper (see diagnostics.ts). */
export interface Diagnostic {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly severity: Severity;
  readonly code: string;
  readonly message: string;
  /**
   * For a code reported once per file (env-not-set): where else in the same file the same problem
   * occurs, in document order. Absent when there is no other place.
   */
  readonly otherPositions?: readonly { readonly line: number; readonly column: number }[];
}
