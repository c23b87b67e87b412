// validate's output formats by name (--format). Adding a format is a file here, its name in
// names.ts and a line below (which the compiler holds to the names, both ways).
import { formatGithub } from './github.js';
import { formatJson } from './json.js';
import type { FormatName } from './names.js';
import { formatText } from './text.js';
import type { Formatter } from './types.js';

export const FORMATTERS = {
  text: formatText,
  json: formatJson,
  github: formatGithub,
} as const satisfies Record<FormatName, Formatter>;

export { FORMAT_NAMES, type FormatName } from './names.js';
export type { DiagnosticsReport, Formatter, FormatterContext } from './types.js';
