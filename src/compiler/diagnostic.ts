export type Severity = 'error' | 'warning';

/** A problem of the configuration: data, raised through one helper (see diagnostics.ts). */
export interface Diagnostic {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly severity: Severity;
  readonly code: string;
  readonly message: string;
}
