// Parameters from the query and from every accepted body type, and what is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, startServe, type RunningService } from '../helpers/serve.js';

let service: RunningService;
beforeAll(async () => {
  service = await startServe(fixture('params'));
});
afterAll(async () => {
  await service?.stop();
});

const show = (query = '', init?: RequestInit) => fetch(`${service.url}/show${query}`, init);

async function detailOf(response: Response): Promise<string> {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return ((await response.json()) as { detail: string }).detail;
}

describe('query string', () => {
  it('binds parameters and applies defaults', async () => {
    expect(await (await show('?a=1')).text()).toBe('a=1;b=-');
  });

  it('joins a repeated parameter with the separator', async () => {
    expect(await (await show('?a=1&a=2&b=x')).text()).toBe('a=1,2;b=x');
  });

  it('counts an empty value as sent, replacing the default', async () => {
    expect(await (await show('?a=&b')).text()).toBe('a=;b=');
  });

  it('decodes percent-encoding and plus signs', async () => {
    expect(await (await show('?a=x%26y+z%2B')).text()).toBe('a=x&y z+;b=-');
  });

  it('ignores parameters that are not declared', async () => {
    expect(await (await show('?a=1&submit=Send')).text()).toBe('a=1;b=-');
  });

  it('refuses an invalid percent-encoding with a 400', async () => {
    const response = await show('?a=%E0%A4%A');
    expect(response.status).toBe(400);
    expect(await detailOf(response)).toContain('percent-encoding');
  });

  it('reads the query of a POST too', async () => {
    const response = await show('?a=q', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'b=f' });
    expect(await response.text()).toBe('a=q;b=f');
  });
});

describe('form bodies', () => {
  it('reads application/x-www-form-urlencoded', async () => {
    const response = await show('', {
      method: 'POST',
      body: new URLSearchParams([
        ['a', 'x y'],
        ['b', 'ü'],
        ['b', '2'],
      ]),
    });
    expect(await response.text()).toBe('a=x y;b=ü,2');
  });

  it('refuses a malformed form body with a 400', async () => {
    const response = await show('', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=%zz' });
    expect(response.status).toBe(400);
    expect(await detailOf(response)).toContain('form body');
  });

  it('reads multipart fields as parameters, files not', async () => {
    const form = new FormData();
    form.append('a', 'multi part');
    form.append('b', new Blob(['file content'], { type: 'text/plain' }), 'b.txt');
    const response = await show('', { method: 'POST', body: form });
    expect(await response.text()).toBe('a=multi part;b=-');
  });

  it('refuses a broken multipart body with a 400', async () => {
    const response = await show('', {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=XYZ' },
      body: '--XYZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue-without-end',
    });
    expect(response.status).toBe(400);
    expect(await detailOf(response)).toContain('multipart');
  });

  it('refuses multipart without a boundary with a 400', async () => {
    const response = await show('', { method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: 'x' });
    expect(response.status).toBe(400);
    expect(await detailOf(response)).toContain('multipart');
  });
});

describe('JSON bodies', () => {
  const post = (body: string) => show('', { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body });

  it('reads strings, numbers, booleans and arrays', async () => {
    expect(await (await post('{"a":"x","b":[1,true,"z"]}')).text()).toBe('a=x;b=1,true,z');
    expect(await (await post('{"a":2.5,"b":false}')).text()).toBe('a=2.5;b=false');
  });

  it('adds a long array to values of the same name from the query', async () => {
    // More values than a function call has room for arguments: still a 200, every value kept.
    const many = Array.from({ length: 200_000 }, () => 'x');
    const response = await show('?a=1&b=q', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ b: many }) });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text.startsWith('a=1;b=q,x,x')).toBe(true);
    expect(text.split(',')).toHaveLength(200_001);
  });

  it('refuses malformed JSON with a 400 that says where', async () => {
    const response = await post('{"a":');
    expect(response.status).toBe(400);
    expect(await detailOf(response)).toBe('malformed JSON body at line 1, column 6: expected a value, found the end of the body');
  });

  // Any JSON value is a body; what is not a scalar (or an array of them) at the top level does not bind by name.
  for (const [what, body, bound] of [
    ['a top-level array', '["a"]', 'a=-;b=-'],
    ['a null value', '{"a":null,"b":"y"}', 'a=-;b=y'],
    ['a nested object', '{"a":{"x":1},"b":"y"}', 'a=-;b=y'],
    ['a nested array', '{"a":[[1]],"b":[1,null]}', 'a=-;b=1'],
  ] as const) {
    it(`accepts ${what}, binding only top-level scalars by name`, async () => {
      const response = await post(body);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe(bound);
    });
  }
});

describe('other bodies', () => {
  it('refuses other content types with a 415', async () => {
    const response = await show('', { method: 'POST', headers: { 'content-type': 'text/xml' }, body: '<a/>' });
    expect(response.status).toBe(415);
    expect(await detailOf(response)).toContain('text/xml');
  });

  it('accepts a POST without a body', async () => {
    const response = await show('?a=1', { method: 'POST' });
    expect(response.status).toBe(200);
  });
});
