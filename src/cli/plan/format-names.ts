// dry-run's output formats by name (--format), apart from the formats themselves: the command line
// offers them at start, and a format is loaded only when a plan is printed.

export const PLAN_FORMATS = ['text', 'json', 'mermaid', 'dot'] as const;

export type PlanFormat = (typeof PLAN_FORMATS)[number];
