// What a template receives keeps the rules its parameter declares, however often the parameter
// is sent: a parameter with a `format` or a `pattern` takes one value, `max-length` bounds the
// values as joined. And a required parameter sent with only invisible characters is missing.
// Through the real binary; each endpoint of the fixture echoes what its template received.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

let service: RunningService;
beforeAll(async () => {
  service = await startServe(fixture('rules'));
});
afterAll(async () => {
  await service?.stop();
});

type Pairs = readonly (readonly [string, string])[];

interface Problem {
  status: number;
  detail: string;
  errors?: { parameter: string; detail: string }[];
}

const post = (endpoint: string, pairs: Pairs) =>
  fetch(`${service.url}/${endpoint}`, { method: 'POST', body: new URLSearchParams(pairs.map(([k, v]) => [k, v])) });
const postJson = (endpoint: string, body: unknown) =>
  fetch(`${service.url}/${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function expectErrors(response: Response, errors: Problem['errors']): Promise<void> {
  expect(response.status).toBe(400);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(((await response.json()) as Problem).errors).toEqual(errors);
}

const ONE_VALUE = (name: string, times: number) => ({ parameter: name, detail: `parameter "${name}" takes one value and was sent ${times} times` });
const TOO_LONG = { parameter: 'msg', detail: 'parameter "msg" is longer than 10 characters' };
const echo = (values: Partial<Record<'msg' | 'email' | 'count' | 'code' | 'tags', string>>) =>
  `msg=${values.msg ?? ''};email=${values.email ?? ''};count=${values.count ?? ''};code=${values.code ?? ''};tags=${values.tags ?? ''}`;

describe('a repeated parameter', () => {
  it('without rules: every value reaches the template, joined with the separator (the control)', async () => {
    const response = await post('rules', [
      ['tags', 'a'],
      ['tags', 'b'],
      ['tags', 'c'],
    ]);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(echo({ tags: 'a||b||c' }));
  });

  it('with max-length: values that fit together reach the template joined', async () => {
    const response = await post('rules', [
      ['msg', '1234'],
      ['msg', '12'],
    ]);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(echo({ msg: '1234||12' }));
  });

  it('with max-length="10", sent 2,000 times: 400, the joined value is too long', async () => {
    await expectErrors(
      await post(
        'rules',
        Array.from({ length: 2000 }, () => ['msg', 'x'] as const),
      ),
      [TOO_LONG],
    );
  });

  it('with max-length="10", two values of 5 (12 characters joined): 400', async () => {
    await expectErrors(
      await post('rules', [
        ['msg', '12345'],
        ['msg', '12345'],
      ]),
      [TOO_LONG],
    );
  });

  it.each([
    ['format="email"', 'email', ['a@example.test', 'b@example.test']],
    ['format="email", one of the two blank', 'email', ['', 'b@example.test']],
    ['format="integer"', 'count', ['1', '2']],
    ['pattern', 'code', ['ABC', 'DEF']],
  ] as const)('with %s, sent twice: 400 naming it', async (_label, name, values) => {
    await expectErrors(
      await post(
        'rules',
        values.map((v) => [name, v] as const),
      ),
      [ONE_VALUE(name, 2)],
    );
  });

  it('with format="integer", as a JSON array: 400 naming it', async () => {
    await expectErrors(await postJson('rules', { count: [1, 2, 3] }), [ONE_VALUE('count', 3)]);
  });

  it('sent once each, the rules kept: 200, each value as sent', async () => {
    const response = await post('rules', [
      ['msg', 'hello'],
      ['email', 'a@example.test'],
      ['count', '12'],
      ['code', 'ABC'],
    ]);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(echo({ msg: 'hello', email: 'a@example.test', count: '12', code: 'ABC' }));
  });

  it('every failing parameter is listed at once, in declaration order', async () => {
    const response = await post('rules', [
      ['code', 'ABC'],
      ['code', 'DEF'],
      ['count', '1'],
      ['count', '2'],
      ['msg', '123456'],
      ['msg', '123456'],
    ]);
    await expectErrors(response, [TOO_LONG, ONE_VALUE('count', 2), ONE_VALUE('code', 2)]);
  });
});

describe('rules skip empty and whitespace-only values, not invisible ones', () => {
  it('an optional email of spaces passes on as sent; one of a zero-width space is checked (400)', async () => {
    const spaces = await post('rules', [['email', '  ']]);
    expect(spaces.status).toBe(200);
    expect(await spaces.text()).toBe(echo({ email: '  ' }));
    await expectErrors(await post('rules', [['email', '\u200b']]), [{ parameter: 'email', detail: 'parameter "email" is not one email address' }]);
  });

  it('a value of only U+00A0 or U+0085 is checked like any other: a pattern refuses it (400), nothing reaches a task', async () => {
    for (const value of ['\u00a0', '\u00a0\u00a0', ' \u0085 ']) {
      const response = await post('rules', [['code', value]]);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { errors: { parameter: string }[] }).errors.map((e) => e.parameter)).toEqual(['code']);
    }
    const tabs = await post('rules', [['code', ' \t ']]);
    expect(tabs.status).toBe(200);
  });
});

describe('format="email" is a bare address', () => {
  it.each([['<a@example.test>'], ['A <a@example.test>'], ['"A" <a@example.test>'], ['a@example.test (A)']])('%s: 400', async (value) => {
    await expectErrors(await post('rules', [['email', value]]), [{ parameter: 'email', detail: 'parameter "email" is not one email address' }]);
  });

  it('a@example.test passes (the control)', async () => {
    expect((await post('rules', [['email', 'a@example.test']])).status).toBe(200);
  });
});

describe('a required parameter holding only invisible characters is missing', () => {
  const MISSING = [{ parameter: 'name', detail: 'missing required parameter "name"' }];

  it.each([
    ['U+0085 (next line)', '\u0085'],
    ['U+200B (zero-width space)', '\u200b'],
    ['U+2060 (word joiner)', '\u2060'],
    ['U+00AD (soft hyphen)', '\u00ad'],
    ['U+FEFF (byte order mark)', '\ufeff'],
    ['U+3164 (Hangul filler)', '\u3164'],
    ['a mix with spaces, tabs and U+00A0', ' \u200b\t\u00a0\u2060 '],
  ])('%s: 400 missing', async (_label, value) => {
    await expectErrors(await post('required', [['name', value]]), MISSING);
  });

  it('a visible character among invisible ones is a value, passed on as sent (the control)', async () => {
    const response = await post('required', [['name', '\u200bAnn']]);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('name=\u200bAnn');
  });
});
