// `--format json`: exactly one JSON document with exactly these keys (a diagnostic's are in
// docs/diagnostics.md, "One diagnostic for many places"). A diagnostic reported once for
// several places (env-not-set) adds `otherPositions`, the other places in its file as
// {line, column}; other diagnostics have exactly the six keys.
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
        ...(d.otherPositions !== undefined && d.otherPositions.length > 0 ? { otherPositions: d.otherPositions } : {}),
      })),
    },
    null,
    2,
  ) + '\n';
