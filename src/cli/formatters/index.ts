// validate's output formats by name (--format). Adding a format is a file here and a line below.
import { formatGithub } from './github.js';
import { formatJson } from './json.js';
import { formatText } from './text.js';
import type { Formatter } from './types.js';

export const FORMATTERS = {
  text: formatText,
  json: formatJson,
  github: formatGithub,
} as const satisfies Record<string, Formatter>;

export type FormatName = keyof typeof FORMATTERS;
export const FORMAT_NAMES = Object.keys(FORMATTERS) as FormatName[];

export type { DiagnosticsReport, Formatter, FormatterContext } from './types.js';
