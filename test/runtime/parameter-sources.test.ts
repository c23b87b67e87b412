// What a JSONPath selects becomes values exactly as docs/language.md ("<parameter>", sources)
// says; a header gives each value it was sent with.
import { describe, expect, it } from 'vitest';
import type { ParameterDeclaration, ParameterSource } from '../../src/compiler/ast.js';
import { compileJsonPath } from '../../src/compiler/json-path.js';
import { NO_SOURCES, sourcedValues, type RequestSources } from '../../src/runtime/sources.js';
import { selectValues } from '../../src/runtime/json-values.js';

function declared(source: ParameterSource): ParameterDeclaration {
  return { name: 'p', source, defaultValue: null, rules: null, position: { file: 'endpoints.xml', line: 1, column: 1 } };
}

function select(path: string, document: unknown): ReturnType<typeof sourcedValues> {
  const compiled = compileJsonPath(path);
  if (!compiled.ok) throw new Error(compiled.problem);
  return sourcedValues(declared({ kind: 'jsonpath', path, query: compiled.query }), {
    ...NO_SOURCES,
    json: { document, select: (_path, query) => selectValues(query, document, Number.MAX_SAFE_INTEGER) },
  });
}

const document = {
  s: 'text',
  n: 42,
  f: 1.5,
  t: true,
  z: null,
  empty: [],
  nulls: [null, null],
  scalars: ['a', 1, false, null],
  object: { b: 1, c: [1, 'x'] },
  objects: [{ id: 1 }, 'x'],
  events: [
    { type: 'push', id: 'a' },
    { type: 'star', id: 'b' },
    { type: 'push', id: 'c' },
  ],
};

describe('values selected by a JSONPath', () => {
  it.each([
    ['$.missing', undefined],
    ['$.z', undefined],
    ['$.empty', undefined],
    ['$.nulls', undefined],
    ['$.s', ['text']],
    ['$.n', ['42']],
    ['$.f', ['1.5']],
    ['$.t', ['true']],
    ['$.scalars', ['a', '1', 'false']],
    ['$.events[*].id', ['a', 'b', 'c']],
    ["$.events[?@.type == 'push'].id", ['a', 'c']],
    ['$.events[-1].id', ['c']],
    ['$.object', ['{"b":1,"c":[1,"x"]}']],
    ['$.objects', ['[{"id":1},"x"]']],
    ['$..c', ['1', 'x']],
  ])('%s gives %j', (path, values) => {
    expect(select(path, document)).toEqual(values);
  });

  it('reads a body that is an array', () => {
    expect(select('$[*].event', [{ event: 'processed' }, { event: 'bounce' }])).toEqual(['processed', 'bounce']);
  });

  it('gives nothing when the request has no JSON body', () => {
    const compiled = compileJsonPath('$.a');
    expect(compiled.ok && sourcedValues(declared({ kind: 'jsonpath', path: '$.a', query: compiled.query }), NO_SOURCES)).toBeUndefined();
  });

  it('refuses, as a problem of the parameter, a body nested deeper than a descendant segment walks', () => {
    let deep: unknown = { a: 1 };
    for (let i = 0; i < 200; i++) deep = { x: deep };
    expect(select('$..a', deep)).toEqual({ problem: 'cannot be read with $..a: the JSON body is nested too deeply' });
  });

  it('refuses, as a problem of the parameter, an object too deep to write as JSON text', () => {
    const deep = JSON.parse(`{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`) as unknown;
    const selected = select('$.a', deep);
    // Up to Node.js 24 writing this text overflows V8's stack, and the value is refused; Node.js 26
    // writes it whole. Either way the answer is about the parameter, never a crash.
    if (!Array.isArray(selected)) expect(selected).toEqual({ problem: 'cannot be read with $.a: the JSON body is nested too deeply' });
    else {
      expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(26);
      expect(selected).toEqual(['['.repeat(100_000) + ']'.repeat(100_000)]);
    }
  });
});

describe('values of a header', () => {
  it('gives each value sent, and nothing for a header not sent', () => {
    const sources: RequestSources = { headers: { 'x-tag': ['a', 'b'] }, json: null };
    expect(sourcedValues(declared({ kind: 'header', header: 'x-tag' }), sources)).toEqual(['a', 'b']);
    expect(sourcedValues(declared({ kind: 'header', header: 'x-other' }), sources)).toBeUndefined();
  });

  it('reads only headers that were sent, whatever their name', () => {
    for (const header of ['constructor', '__proto__', 'tostring', 'hasOwnProperty']) {
      expect(sourcedValues(declared({ kind: 'header', header }), NO_SOURCES)).toBeUndefined();
      expect(sourcedValues(declared({ kind: 'header', header }), { headers: {}, json: null })).toBeUndefined();
    }
  });
});

describe('compiling a JSONPath', () => {
  it.each(['$.a[0', 'a.b', '$.a.', '$[?@.a == ]', '$.a[?nope(@)]', ''])('refuses %j', (path) => {
    expect(compileJsonPath(path).ok).toBe(false);
  });

  it('compiles one text once', () => {
    expect(compileJsonPath('$.repository.full_name')).toBe(compileJsonPath('$.repository.full_name'));
  });
});

describe('a long flat array', () => {
  const value = Array.from({ length: 300_000 }, (_, i) => ({ subscriptionId: `s${i}` }));

  it('is read by index, and [*] over it is refused beyond 250000 values, never as nested too deeply', () => {
    expect(select('$.value[-1].subscriptionId', { value })).toEqual(['s299999']);
    expect(select('$.value[*].subscriptionId', { value })).toEqual({
      problem: 'cannot be read with $.value[*].subscriptionId: it selects more than 250000 values',
    });
  });

  it('gives up to 250000 values', () => {
    expect(select('$.value[*].subscriptionId', { value: value.slice(0, 250_000) })).toHaveLength(250_000);
  });
});
