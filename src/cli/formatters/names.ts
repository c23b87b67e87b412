// validate's output formats by name (--format), apart from the formatters themselves: the command
// line offers them at start, and a formatter is loaded only when a report is printed.

export const FORMAT_NAMES = ['text', 'json', 'github'] as const;

export type FormatName = (typeof FORMAT_NAMES)[number];
