import { describe, expect, it } from 'vitest';
import type { OutputIntermediateValue } from '../../src/compiler/ast.js';
import { extractOutputs, OutputError } from '../../src/tasks/http-request/outputs.js';
import { regex as compiled, selector } from './builders.js';

const json = (path: string, name = 'v', regex: string | null = null): OutputIntermediateValue => ({
  name,
  selector: selector('jsonpath', path),
  regex: regex === null ? null : compiled(regex),
});
const xml = (path: string, name = 'v', regex: string | null = null): OutputIntermediateValue => ({
  name,
  selector: selector('xpath', path),
  regex: regex === null ? null : compiled(regex),
});

const answer = (body: string, contentType?: string) => ({
  headers: contentType === undefined ? {} : { 'content-type': contentType },
  body: Buffer.from(body),
});

function fails(outputs: OutputIntermediateValue[], body: string, contentType: string | undefined, expected: string | RegExp): void {
  let error: unknown;
  try {
    extractOutputs(outputs, answer(body, contentType));
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(OutputError);
  expect((error as Error).message).toMatch(expected);
}

describe('JSONPath outputs', () => {
  const body = JSON.stringify({ id: 'c-17', count: 3, price: 9.5, active: false, items: [{ n: 1 }, { n: 2 }], nothing: null, obj: {} });

  it('takes strings, numbers (decimal text) and booleans', () => {
    const values = extractOutputs(
      [json('$.id', 'id'), json('$.count', 'count'), json('$.price', 'price'), json('$.active', 'active'), json('$.items[1].n', 'second')],
      answer(body, 'application/json; charset=utf-8'),
    );
    expect(Object.fromEntries(values)).toEqual({ id: 'c-17', count: '3', price: '9.5', active: 'false', second: '2' });
  });

  it('parses an answer without a JSON content type when it is JSON', () => {
    expect(extractOutputs([json('$.id')], answer(body, 'text/plain')).get('v')).toBe('c-17');
  });

  it('fails on no match, several matches and non-scalar results', () => {
    fails([json('$.missing')], body, 'application/json', 'matched nothing');
    fails([json('$.items[*].n')], body, 'application/json', 'matched 2 values');
    fails([json('$.obj')], body, 'application/json', 'an object, not a string');
    fails([json('$.items')], body, 'application/json', 'an array');
    fails([json('$.nothing')], body, 'application/json', 'null');
  });

  it('reads RFC 9535 paths: filters without parentheses, functions, negative indexes, quoted names', () => {
    const reply = answer(
      JSON.stringify({
        'display name': 'Ada',
        items: [
          { n: 1, tags: [] },
          { n: 2, tags: ['x'] },
          { n: 3, tags: [] },
        ],
        code: 'c-7',
      }),
      'application/json',
    );
    const values = extractOutputs(
      [
        json("$['display name']", 'name'),
        json('$.items[?length(@.tags) > 0].n', 'tagged'),
        json('$.items[?@.n > 2].n', 'big'),
        json('$.items[-1].n', 'last'),
        json("$[?match(@, 'c-[0-9]')]", 'code'),
      ],
      reply,
    );
    expect(Object.fromEntries(values)).toEqual({ name: 'Ada', tagged: '2', big: '3', last: '3', code: 'c-7' });
  });

  it('fails on a filter that keeps several nodes or none, as on any path', () => {
    fails([json('$.items[?@.n > 0].n')], body, 'application/json', 'matched 2 values');
    fails([json('$.items[?@.n > 5].n')], body, 'application/json', 'matched nothing');
  });

  it('fails, as a problem of the answer, on an answer nested deeper than a descendant segment walks', () => {
    let deep: unknown = { id: 1 };
    for (let i = 0; i < 200; i++) deep = { x: deep };
    fails([json('$..id')], JSON.stringify(deep), 'application/json', 'could not be evaluated');
  });

  it('fails when the answer is not JSON', () => {
    fails([json('$.id')], '<a/>', 'application/xml', 'is XML');
    fails([json('$.id')], 'not json', 'text/plain', 'not valid JSON');
  });

  it('requires the regex to match the whole value', () => {
    expect(extractOutputs([json('$.id', 'v', 'c-\\d+')], answer(body, 'application/json')).get('v')).toBe('c-17');
    fails([json('$.id', 'v', '\\d+')], body, 'application/json', /"c-17" does not match/);
  });

  it('checks the whole value against every alternative', () => {
    fails([json('$.id', 'v', 'c|c-1')], body, 'application/json', 'does not match the regular expression c|c-1');
    expect(extractOutputs([json('$.id', 'v', 'x|c-17')], answer(body, 'application/json')).get('v')).toBe('c-17');
  });
});

describe('XPath outputs', () => {
  const body = `<?xml version="1.0"?>
<order id="o-5"><customer><name>Ada</name><![CDATA[]]></customer><total>12.50</total><note><!-- c -->hi</note><lines><line>1</line><line>2</line></lines></order>`;

  it('takes attributes, text-only elements, text() and string/number/boolean results', () => {
    const values = extractOutputs(
      [
        xml('/order/@id', 'id'),
        xml('/order/customer/name', 'name'),
        xml('/order/total/text()', 'total'),
        xml('/order/note', 'note'),
        xml('count(/order/lines/line)', 'lines'),
        xml('string(/order/customer/name)', 'str'),
        xml('/order/total > 10', 'big'),
      ],
      answer(body, 'application/xml'),
    );
    expect(Object.fromEntries(values)).toEqual({ id: 'o-5', name: 'Ada', total: '12.50', note: 'hi', lines: '2', str: 'Ada', big: 'true' });
  });

  it('fails on elements with children, several nodes and no node', () => {
    fails([xml('/order/customer')], body, 'text/xml', 'has child elements');
    fails([xml('/order/lines/line')], body, 'text/xml', 'matched 2 values');
    fails([xml('/order/missing')], body, 'text/xml', 'matched nothing');
  });

  it('fails when the answer is not XML', () => {
    fails([xml('/a')], '{"a":1}', 'application/json', 'is JSON');
    fails([xml('/a')], '<a><b></a>', 'application/xml', 'not well-formed XML');
  });

  it('applies the regex to the selected text', () => {
    expect(extractOutputs([xml('/order/total', 'v', '\\d+\\.\\d{2}')], answer(body, 'application/xml')).get('v')).toBe('12.50');
    fails([xml('/order/total', 'v', '\\d+')], body, 'application/xml', 'does not match');
  });
});
