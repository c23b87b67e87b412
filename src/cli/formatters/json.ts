// `--format json`: exactly one JSON document with exactly the keys of cli.md, "validate".
import type { Formatter } from './types.js';

export const formatJson: Formatter = ({ diagnostics, errorCount, warningCount }) =>
  JSON.stringify(
    {
      valid: errorCount === 0,
      errorCount,
      warningCount,
      diagnostics: diagnostics.map((d) => ({
        file: d.file,
        line: d.line,
        column: d.column,
        severity: d.severity,
        code: d.code,
        message: d.message,
      })),
    },
    null,
    2,
  ) + '\n';
