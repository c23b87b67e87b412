// Where something stands in a configuration file: every diagnostic, template and AST node has one.

export interface Position {
  /** The path as given on the command line, or of the referenced file. */
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly column: number;
}
