// A JSON body as parameters receive it: numbers a double cannot hold keep their text, the values
// bound by name are bounded, and a body read on another thread binds as one read here.
import { describe, expect, it } from 'vitest';
import { jsonBodyOf, readJsonBody, readJsonBodyData } from '../../src/runtime/json-body.js';
import { compileJsonPath } from '../../src/compiler/json-path.js';
import type { ValueMap } from '../../src/runtime/urlencoded.js';

const bytes = (text: string) => new TextEncoder().encode(text);

function query(path: string) {
  const compiled = compileJsonPath(path);
  if (!compiled.ok) throw new Error(compiled.problem);
  return compiled.query;
}

describe('numbers a double cannot hold', () => {
  it('bind as their JSON text, never "null" nor rounded digits', () => {
    const into: ValueMap = new Map();
    expect(readJsonBody(bytes('{"a":1e400,"b":-1E+999,"c":[12345678901234567890,2],"d":1.5,"e":1e2}'), into).ok).toBe(true);
    expect(Object.fromEntries(into)).toEqual({ a: ['1e400'], b: ['-1E+999'], c: ['12345678901234567890', '2'], d: ['1.5'], e: ['100'] });
  });

  it('keep their text inside an object selected by JSONPath', () => {
    const read = readJsonBody(bytes('{"o":{"n":1e400}}'), new Map());
    expect(read.ok && read.json.select('$.o', query('$.o'))).toEqual(['{"n":1e400}']);
  });
});

describe('values bound by name', () => {
  it('an array longer than 250000 items gives 250001 values: enough for a parameter that reads it to be refused', () => {
    const into: ValueMap = new Map();
    readJsonBody(bytes(JSON.stringify({ list: Array.from({ length: 300_000 }, () => 1) })), into);
    expect(into.get('list')).toHaveLength(250_001);
  });

  it('more than 500000 values over the top-level members refuse the body', () => {
    const body: Record<string, number[]> = {};
    for (let i = 0; i < 3; i++) body[`m${i}`] = Array.from({ length: 200_000 }, () => 1);
    expect(readJsonBody(bytes(JSON.stringify(body)), new Map())).toEqual({
      ok: false,
      detail: "the JSON body's top-level members hold more than 500000 values",
    });
  });
});

describe('a body read on another thread', () => {
  it('binds by name and by JSONPath as one read here', () => {
    const text = '{"a":"x","list":[1,2],"deep":{"b":[{"c":1},{"c":2}]}}';
    const here: ValueMap = new Map();
    const there: ValueMap = new Map();
    const local = readJsonBody(bytes(text), here);
    const remote = jsonBodyOf(readJsonBodyData(bytes(text), ['$..c', '$.deep']), there);
    expect(there).toEqual(here);
    for (const path of ['$..c', '$.deep']) {
      expect(remote.ok && remote.json.select(path, query(path))).toEqual(local.ok && local.json.select(path, query(path)));
    }
  });

  it('says where a malformed body breaks', () => {
    expect(readJsonBodyData(bytes('{"a":'), [])).toEqual({
      ok: false,
      detail: 'malformed JSON body at line 1, column 6: expected a value, found the end of the body',
    });
  });
});
