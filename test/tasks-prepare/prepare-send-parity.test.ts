// Preparation and delivery check a message with the same functions, so what prepareEmails
// accepts toMailOptions (what is handed to nodemailer) accepts, and what one refuses the other
// refuses: a value can never pass preparation and fail at send time, after the request's other
// tasks have run.
import { describe, expect, it } from 'vitest';
import { toMailOptions } from '../../src/tasks/email/delivery.js';
import { prepareEmails } from '../../src/tasks/email/prepare.js';
import type { PreparedEmail } from '../../src/tasks/email/types.js';
import { UnsafeValueError } from '../../src/template/escape.js';
import { emailTask, scope, tpl } from './ast-builders.js';

const ADDRESSES: readonly (readonly [string, boolean])[] = [
  ['ann@example.test', true],
  ['Ann <ann@example.test>', true],
  ['"Ann (Sales)" <ann@example.test>', true],
  ['ä@bücher.test', true],
  ['ann@example.test||eve@example.test', false],
  ['ann@example.test, eve@example.test', false],
  ['ann@example.test\u0085', false],
  ['an\u0000n@example.test', false],
  ['an\u200bn@example.test', false],
  ['ann@exam\u2028ple.test', false],
  // Surrounding whitespace is trimmed, U+2028 as a space: the address delivered is the one checked.
  [' ann@example.test\u2028', true],
  ['ann@example.test (Evil Name)', false],
  ['(Evil) ann@example.test', false],
  ['ann@', false],
  ['nobody', false],
];

const SUBJECTS: readonly (readonly [string, boolean])[] = [
  ['Hello ü', true],
  ['tab\there', true],
  ['line\u2028separator', true],
  ['a\u0000b', false],
  ['a\u000bb', false],
  ['a\u000cb', false],
  ['a\u007fb', false],
  ['a\u0085b', false],
];

const prepare = (overrides: Parameters<typeof emailTask>[0], values: Record<string, string>): PreparedEmail[] =>
  prepareEmails(emailTask(overrides), scope(values), [], null, '||');

const accepted = (run: () => unknown): boolean => {
  try {
    run();
    return true;
  } catch {
    return false;
  }
};

describe('prepareEmails and toMailOptions agree', () => {
  /** What prepare made of the value is what delivery takes; a value prepare refuses, delivery refuses as well. */
  function both(overrides: Parameters<typeof emailTask>[0], values: Record<string, string>, raw: Partial<PreparedEmail>): [boolean, boolean] {
    let message: PreparedEmail | null = null;
    const prepared = accepted(() => (message = prepare(overrides, values)[0]!));
    const sent = accepted(() => toMailOptions(message ?? { ...prepare({}, {})[0]!, ...raw }));
    return [prepared, sent];
  }

  it.each(ADDRESSES)('the recipient %j: accepted by both, or refused by both (%s)', (value, ok) => {
    expect(both({ to: [tpl('${to}', 'header')] }, { to: value }, { to: value })).toEqual([ok, ok]);
  });

  it.each(SUBJECTS)('the subject %j: accepted by both, or refused by both (%s)', (value, ok) => {
    expect(both({ subject: tpl('${s}', 'header') }, { s: value }, { subject: value })).toEqual([ok, ok]);
  });

  it('a body of 1 MiB is accepted by both, one byte more refused by both', () => {
    const body = (content: string) => prepare({ bodies: [{ contentType: 'text/plain', template: tpl('${m}', 'none'), inlineImages: [] }] }, { m: content });
    const fits = 'x'.repeat(1024 * 1024);
    expect(toMailOptions(body(fits)[0]!).alternatives).toHaveLength(1);
    expect(() => body(fits + 'x')).toThrow(UnsafeValueError);
    expect(() => toMailOptions({ ...body('x')[0]!, bodies: [{ contentType: 'text/plain', content: fits + 'x' }] })).toThrow(/larger than 1 MiB/);
  });

  it('a refusal in a request value blames its placeholder, one in the written text blames none', () => {
    const refusal = (run: () => unknown): UnsafeValueError => {
      try {
        run();
      } catch (error) {
        if (error instanceof UnsafeValueError) return error;
      }
      throw new Error('expected an UnsafeValueError');
    };
    expect(refusal(() => prepare({ subject: tpl('Hi ${s}', 'header') }, { s: 'a\u0000' })).culprits).toEqual([{ kind: 'parameter', name: 's' }]);
    expect(refusal(() => prepare({ subject: tpl('Hi\u0007 ${s}', 'header') }, { s: 'a' })).culprits).toEqual([]);
  });
});
