// A JSON body is parsed once per request, however many parameters read it with a JSONPath.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Endpoint, ParameterDeclaration } from '../../src/compiler/ast.js';
import { compileJsonPath } from '../../src/compiler/json-path.js';
import { readJsonBody } from '../../src/runtime/json-body.js';
import { bindParameters } from '../../src/runtime/parameters.js';

const position = { file: 'endpoints.xml', line: 1, column: 1 };
function byPath(name: string, path: string): ParameterDeclaration {
  const compiled = compileJsonPath(path);
  if (!compiled.ok) throw new Error(compiled.problem);
  return { name, source: { kind: 'jsonpath', path, query: compiled.query }, defaultValue: null, rules: null, position };
}

afterEach(() => vi.restoreAllMocks());

describe('a JSON body', () => {
  it('is parsed once for five JSONPath parameters and the names of its top level', () => {
    const parameters = [byPath('a', '$.x.a'), byPath('b', '$.x.b'), byPath('c', '$.list[*]'), byPath('d', '$.x'), byPath('e', '$.n')];
    const endpoint = { parameters, parametersByName: new Map(parameters.map((p) => [p.name, p])), separator: ',' } as unknown as Endpoint;
    const parse = vi.spyOn(JSON, 'parse');
    const raw = new Map<string, string[]>();
    const read = readJsonBody(Buffer.from('{"x":{"a":"1","b":2},"list":[3,4],"n":true}'), raw);
    if (!read.ok) throw new Error(read.detail);
    const bound = bindParameters(endpoint, raw, { headers: {}, json: read.json });
    expect(bound.ok && Object.fromEntries(bound.parameters)).toEqual({ a: '1', b: '2', c: '3,4', d: '{"a":"1","b":2}', e: 'true' });
    expect(raw).toEqual(new Map([['list', ['3', '4']], ['n', ['true']]]));
    expect(parse).toHaveBeenCalledTimes(1);
  });
});
