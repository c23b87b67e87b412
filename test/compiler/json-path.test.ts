// Every jsonpath attribute is RFC 9535 (docs/language.md, "JSONPath"). Forms that jsonpath-plus
// or Jayway accepted are refused with what to write instead, and what the advice says to write
// is itself a path that selects what the old one meant.
import { describe, expect, it } from 'vitest';
import { compileJsonPath } from '../../src/compiler/json-path.js';
import { formOfOtherDialect, masked } from '../../src/compiler/json-path-dialects.js';
import { compileXml } from './helpers.js';

function select(path: string, document: unknown): readonly unknown[] {
  const compiled = compileJsonPath(path);
  if (!compiled.ok) throw new Error(`${path}: ${compiled.problem}`);
  return [...compiled.query.select(document)];
}

function form(path: string): { construct: string; advice: string } {
  const compiled = compileJsonPath(path);
  expect(compiled.ok, path).toBe(false);
  if (compiled.ok || compiled.form === null) throw new Error(`${path}: no form of another dialect named`);
  return compiled.form;
}

const shop = {
  items: [
    { id: 'a-1', name: 'apple', n: 1, tags: ['red'] },
    { id: 'b-2', name: 'banana', n: 2, tags: [] },
    { id: 'c-3', name: 'cherry', n: 3, tags: ['red', 'small'] },
  ],
  'display name': 'Shop',
  value: [{ '@odata.id': 'x-9' }],
  orders: [
    { id: 'o-1', items: [1, 2, 3] },
    { id: 'o-2', items: [1] },
  ],
};

describe('paths of other dialects', () => {
  // [written for jsonpath-plus or Jayway, what the advice says to write, a rewrite with it, what the rewrite selects in `shop`]
  it.each([
    ['$.orders[0].items.length', 'length(@.items)', '$.orders[?length(@.items) > 2].id', ['o-1']],
    ['$.items[?(@.tags.length > 1)].id', 'length(@.tags)', '$.items[?length(@.tags) > 1].id', ['c-3']],
    ['$.items[?@.tags.length() > 1].id', 'length(@.tags)', '$.items[?length(@.tags) > 1].id', ['c-3']],
    ['$.orders[0].items.size()', 'length(@.items)', '$.orders[?length(@.items) == 1].id', ['o-2']],
    ['$.items[?(@.name == banana)].id', "'banana'", "$.items[?(@.name == 'banana')].id", ['b-2']],
    ['$.items[?(banana == @.name)].id', "'banana'", "$.items[?'banana' == @.name].id", ['b-2']],
    ['$.items[?(@.n===2)].id', '==', '$.items[?(@.n==2)].id', ['b-2']],
    ['$.items[?(@.n!==2)].id', '!=', '$.items[?@.n!=2].id', ['a-1', 'c-3']],
    ['$.items[?(@.n = 2)].id', '==', '$.items[?@.n == 2].id', ['b-2']],
    ['$.items[(@.length-1)].id', '[-1]', '$.items[-1].id', ['c-3']],
    ["$.items[?(@.name.startsWith('ba'))].id", "match(@.name, 'ba.*')", "$.items[?match(@.name, 'ba.*')].id", ['b-2']],
    ["$.items[?(@.name.endsWith('rry'))].id", "match(@.name, '.*rry')", "$.items[?match(@.name, '.*rry')].id", ['c-3']],
    ["$.items[?(@.name.includes('an'))].id", "search(@.name, 'an')", "$.items[?search(@.name, 'an')].id", ['b-2']],
    ['$.items[?(@.name =~ /^ch/)].id', "match(@.name, 'ch.*')", "$.items[?match(@.name, 'ch.*')].id", ['c-3']],
    ['$.items[?(@.name =~ /pp/i)].id', "search(@.name, 'pp')", "$.items[?search(@.name, 'pp')].id", ['a-1']],
    ['$.items[?(@.id =~ /^c-\\d$/)].id', "match(@.id, 'c-[0-9]')", "$.items[?match(@.id, 'c-[0-9]')].id", ['c-3']],
    ['$.items.first()', '[0]', '$.items[0].id', ['a-1']],
    ['$.items.last()', '[-1]', '$.items[-1].id', ['c-3']],
    ['$.items[?(@.n > 1 and @.n < 3)].id', '&&', '$.items[?@.n > 1 && @.n < 3].id', ['b-2']],
    ['$.items[?(@.n == 1 or @.n == 3)].id', '||', '$.items[?@.n == 1 || @.n == 3].id', ['a-1', 'c-3']],
    ["$.items[?(@.name in ['apple'])].id", '||', "$.items[?@.name == 'apple'].id", ['a-1']],
    ['$.items[?(@.n > @root.limit)].id', '$', '$.items[?@.n > $.items[0].n].id', ['b-2', 'c-3']],
    ['$.value[0].`@odata.id`', "['@odata.id']", "$.value[0]['@odata.id']", ['x-9']],
    ['$[items][0].id', "['items']", "$['items'][0].id", ['a-1']],
  ])('%s: says to write %s', (path, advice, rewrite, selects) => {
    expect(form(path).advice).toContain(advice);
    expect(select(rewrite, shop)).toEqual(selects);
  });

  it.each(['$.items[?(@parent.ok)]', '$.items[?(@property == "a")]', '$.items[?@path]', '$.items[*].@string()', '$.items.*~', '$.items[0]^', '$.items.sum()'])(
    'refuses %s, which RFC 9535 has no form for',
    (path) => {
      form(path);
    },
  );

  it('refuses `.length` though RFC 9535 reads it as a member named "length", and says how to select that member', () => {
    expect(form('$.video.length').advice).toContain("$.video['length']");
    expect(select("$.video['length']", { video: { length: 93 } })).toEqual([93]);
  });
});

describe('RFC 9535 paths are not taken for another dialect', () => {
  it.each([
    ['$.items[?(@.n==2)].id', ['b-2']],
    ["$.items[?(@.name=='apple')].id", ['a-1']],
    ['$.items[?@.n > 1 && @.n < 3].id', ['b-2']],
    ['$.items[?length(@.tags) > 0].id', ['a-1', 'c-3']],
    ['$.items[?count(@.tags[*]) == 2].id', ['c-3']],
    ["$.items[?value(@.tags[0]) == 'red'].id", ['a-1', 'c-3']],
    ["$['display name']", ['Shop']],
    ["$.items[?@.name == 'a.length'].id", []],
    ["$['items.length']", []],
    ['$.items.size', []],
    ['$.items.lengthy', []],
    ['$..length', []],
  ])('%s', (path, selects) => {
    expect(select(path, shop)).toEqual(selects);
  });

  it('names no form in a path that is only malformed', () => {
    for (const path of ['$.a[0', '$[?@.a == ]', '$.a[?nope(@)]', "$['a"]) {
      const compiled = compileJsonPath(path);
      expect(compiled.ok).toBe(false);
      expect(!compiled.ok && compiled.form).toBeNull();
      expect(formOfOtherDialect(path)).toBeNull();
    }
  });

  it('reads no form inside a string or a regex literal', () => {
    expect(masked('$[\'a.length\'][?@.b == "x===y"]')).toBe('$[\'________\'][?@.b == "_____"]');
    expect(masked('$[?@.a =~ /[(@.length-1)]/]')).toBe('$[?@.a =~ /______________/]');
  });
});

describe('unsupported-jsonpath', () => {
  it('is reported at the attribute, on an output and on a parameter', () => {
    const result = compileXml(`<endpoint-folder>
  <endpoint name="e">
    <parameter name="n" jsonpath="$.items.length"/>
    <task class="HttpRequest"><url>https://a.example/</url>
      <output-intermediate-value name="v" jsonpath="$.items[?(@.name == foo)].id"/>
      <output-intermediate-value name="w" jsonpath="$.items[?@.name == 'foo'].id"/>
    </task>
  </endpoint>
</endpoint-folder>
`);
    expect(result.diagnostics.map((d) => [d.severity, d.code, d.line, d.column])).toEqual([
      ['error', 'unsupported-jsonpath', 3, 25],
      ['error', 'unsupported-jsonpath', 5, 43],
    ]);
  });
});
