// Input rules of a <parameter> (pattern, max-length, format): compiled once, checked on a
// non-empty default-value when compiled and on every non-empty value a request sends. As in
// HTML forms, emptiness is the business of requiredness alone, never of a rule.

import { parseOneAddress } from '../email-address.js';
import type { ParameterFormat, ParameterRules } from './ast.js';

export const PARAMETER_FORMATS: readonly ParameterFormat[] = ['email', 'url', 'integer', 'number', 'date'];

/** Why `value` breaks the rules, as a predicate without the value ("is not one email address"); null when it keeps them. */
export function ruleViolation(rules: ParameterRules, value: string): string | null {
  if (rules.maxLength !== null && characterCount(value) > rules.maxLength) return `is longer than ${rules.maxLength} characters`;
  if (rules.format !== null && !FORMAT_CHECKS[rules.format](value)) return FORMAT_PREDICATES[rules.format];
  if (rules.pattern !== null && !rules.pattern.matchesWhole(value)) return 'does not have the expected form';
  return null;
}

/** Characters as people count them (code points), not UTF-16 units: an emoji is one. */
function characterCount(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

const FORMAT_CHECKS: Readonly<Record<ParameterFormat, (value: string) => boolean>> = {
  // A bare address, as a form's email field holds it: `A <a@x>` and `<a@x>` are mailboxes the mail
  // tasks take, but a parameter that says "email" is an address, not a name to show beside one.
  email: (value) => parseOneAddress(value)?.address === value.trim() && !value.includes('<'),
  url: (value) => {
    if (/\s/.test(value)) return false;
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    } catch {
      return false;
    }
  },
  integer: (value) => /^[+-]?\d+$/.test(value),
  number: (value) => /^[+-]?(?:\d+(?:\.\d+)?|\.\d+)$/.test(value),
  date: (value) => {
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
    if (match === null) return false;
    const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
    const date = new Date(Date.UTC(year, month - 1, day));
    return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  },
};

const FORMAT_PREDICATES: Readonly<Record<ParameterFormat, string>> = {
  email: 'is not one email address',
  url: 'is not an absolute http or https URL',
  integer: 'is not a whole number',
  number: 'is not a decimal number',
  date: 'is not a date written YYYY-MM-DD',
};
