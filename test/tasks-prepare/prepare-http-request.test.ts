import { describe, expect, it } from 'vitest';
import { prepareHttpRequest, secretParameters } from '../../src/tasks/http-request/prepare.js';
import { DEFAULT_HTTP_REQUEST_SETTINGS } from '../../src/tasks/http-request/settings.js';
import { UnsafeValueError } from '../../src/template/escape.js';
import { MissingValueError } from '../../src/template/expand.js';
import { httpTask, named, scope, tpl } from './ast-builders.js';

describe('prepareHttpRequest: URL and query', () => {
  it('inserts a leading placeholder as is and percent-encodes the others', () => {
    const task = httpTask({ url: tpl('${base}/customers/${id}', 'url') });
    const prepared = prepareHttpRequest(task, scope({ base: 'https://crm.example', id: 'a/b c?' }));
    expect(prepared.url).toBe('https://crm.example/customers/a%2Fb%20c%3F');
  });

  it('appends get-parameters with ? and form-encodes literal names and values', () => {
    const task = httpTask({
      url: tpl('https://api.example/search', 'url'),
      getParameters: [named('q', '${q}', 'form'), named('sort by', 'name asc', 'form')],
    });
    const prepared = prepareHttpRequest(task, scope({ q: "a&b=c d!'" }));
    expect(prepared.url).toBe('https://api.example/search?q=a%26b%3Dc+d%21%27&sort+by=name+asc');
  });

  it('joins an existing query with & and keeps the fragment last', () => {
    const task = httpTask({ url: tpl('https://api.example/x?lang=en#top', 'url'), getParameters: [named('id', '${id}', 'form')] });
    expect(prepareHttpRequest(task, scope({ id: '7' })).url).toBe('https://api.example/x?lang=en&id=7#top');
  });

  it('does not double the separator when the URL already ends with ? or &', () => {
    const p = [named('id', '1', 'form')];
    expect(prepareHttpRequest(httpTask({ url: tpl('https://a.example/x?', 'url'), getParameters: p }), scope()).url).toBe('https://a.example/x?id=1');
    expect(prepareHttpRequest(httpTask({ url: tpl('https://a.example/x?a=1&', 'url'), getParameters: p }), scope()).url).toBe('https://a.example/x?a=1&id=1');
  });

  it('leaves the URL alone without get-parameters', () => {
    expect(prepareHttpRequest(httpTask(), scope()).url).toBe('https://api.example/items');
  });

  it('passes the resolved method through', () => {
    expect(prepareHttpRequest(httpTask({ method: 'DELETE' }), scope()).method).toBe('DELETE');
  });
});

describe('prepareHttpRequest: headers', () => {
  it('lower-cases names and expands values', () => {
    const task = httpTask({ headers: [named('X-Customer', 'id ${id}', 'header')] });
    const prepared = prepareHttpRequest(task, scope({ id: '42' }));
    expect(prepared.headers).toEqual({ 'x-customer': 'id 42' });
    expect(prepared.secretHeaders).toEqual([]);
  });

  it.each(['a\r\nx-evil: 1', 'a\nb', 'a\rb'])('refuses a value with CR or LF (%j)', (value) => {
    const task = httpTask({ headers: [named('X-Name', '${name}', 'header')] });
    expect(() => prepareHttpRequest(task, scope({ name: value }))).toThrow(UnsafeValueError);
  });

  it('marks a header read from ${env:...} as secret', () => {
    const task = httpTask({ headers: [named('X-Api-Key', '${env:CRM_KEY}', 'header'), named('Accept', 'application/json', 'header')] });
    const prepared = prepareHttpRequest(task, scope({}, { env: { CRM_KEY: 's3cret' } }));
    expect(prepared.headers['x-api-key']).toBe('s3cret');
    expect(prepared.secretHeaders).toEqual(['x-api-key']);
  });

  it('treats an authorization header as secret even when written literally', () => {
    const task = httpTask({ headers: [named('Authorization', 'Bearer abc', 'header')] });
    expect(prepareHttpRequest(task, scope()).secretHeaders).toEqual(['authorization']);
  });

  it('fails when an ${env:...} variable is not set', () => {
    const task = httpTask({ headers: [named('X-Api-Key', '${env:MISSING_KEY}', 'header')] });
    expect(() => prepareHttpRequest(task, scope())).toThrow(MissingValueError);
  });

  it('joins a repeated header into one comma-separated field', () => {
    const task = httpTask({ headers: [named('Accept', 'application/json', 'header'), named('accept', 'text/plain', 'header')] });
    expect(prepareHttpRequest(task, scope()).headers).toEqual({ accept: 'application/json, text/plain' });
  });

  it('lets the dry-run hook mask secrets without escaping', () => {
    const task = httpTask({
      url: tpl('https://api.example/c/${id}', 'url', ['id']),
      headers: [named('X-Api-Key', 'k=${env:CRM_KEY}', 'header')],
    });
    const prepared = prepareHttpRequest(
      task,
      scope({}, { verbatim: (p) => (p.kind === 'env' ? '***' : p.kind === 'intermediate' ? `<from fetch>` : undefined) }),
    );
    expect(prepared.url).toBe('https://api.example/c/<from fetch>');
    expect(prepared.headers['x-api-key']).toBe('k=***');
  });
});

describe('prepareHttpRequest: basic authentication', () => {
  it('sends Basic base64(user:pass) and marks it secret', () => {
    const task = httpTask({ basicAuth: { username: tpl('api', 'header'), password: tpl('${env:PW}', 'header') } });
    const prepared = prepareHttpRequest(task, scope({}, { env: { PW: 'pä:ss' } }));
    expect(prepared.headers['authorization']).toBe('Basic ' + Buffer.from('api:pä:ss', 'utf8').toString('base64'));
    expect(prepared.secretHeaders).toContain('authorization');
  });

  it('refuses a username with a colon', () => {
    const task = httpTask({ basicAuth: { username: tpl('${user}', 'header'), password: tpl('x', 'header') } });
    expect(() => prepareHttpRequest(task, scope({ user: 'a:b' }))).toThrow(UnsafeValueError);
  });

  it('refuses CR/LF in the credentials', () => {
    const task = httpTask({ basicAuth: { username: tpl('${user}', 'header'), password: tpl('x', 'header') } });
    expect(() => prepareHttpRequest(task, scope({ user: 'a\r\nb' }))).toThrow(UnsafeValueError);
  });
});

describe('prepareHttpRequest: bodies', () => {
  it('expands a JSON body JSON-escaped with a default content type', () => {
    const task = httpTask({ method: 'POST', body: { kind: 'json', template: tpl('{"name":"${name}"}', 'json') } });
    const prepared = prepareHttpRequest(task, scope({ name: 'Ann "the" \\ \n' }));
    expect(JSON.parse(prepared.body as string)).toEqual({ name: 'Ann "the" \\ \n' });
    expect(prepared.headers['content-type']).toBe('application/json');
  });

  it('expands an XML body XML-escaped with a default content type', () => {
    const task = httpTask({ method: 'POST', body: { kind: 'xml', template: tpl('<c name="${name}">${name}</c>', 'xml') } });
    const prepared = prepareHttpRequest(task, scope({ name: `<a & 'b'>` }));
    expect(prepared.body).toBe('<c name="&lt;a &amp; &apos;b&apos;&gt;">&lt;a &amp; &apos;b&apos;&gt;</c>');
    expect(prepared.headers['content-type']).toBe('application/xml');
  });

  it('keeps a content type set by a request-header, whatever its case', () => {
    const task = httpTask({
      method: 'POST',
      headers: [named('Content-Type', 'application/vnd.crm+json', 'header')],
      body: { kind: 'json', template: tpl('{}', 'json') },
    });
    expect(prepareHttpRequest(task, scope(), { ...DEFAULT_HTTP_REQUEST_SETTINGS, idempotencyKeys: false }).headers).toEqual({
      'content-type': 'application/vnd.crm+json',
    });
  });

  it('builds a form body from post-parameters', () => {
    const task = httpTask({
      method: 'POST',
      body: { kind: 'form', parameters: [named('e mail', '${email}', 'form'), named('plan', 'gold', 'form')] },
    });
    const prepared = prepareHttpRequest(task, scope({ email: 'a+b@x.example&admin=1' }));
    expect(prepared.body).toBe('e+mail=a%2Bb%40x.example%26admin%3D1&plan=gold');
    expect(Object.fromEntries(new URLSearchParams(prepared.body as string))).toEqual({ 'e mail': 'a+b@x.example&admin=1', plan: 'gold' });
    expect(prepared.headers['content-type']).toBe('application/x-www-form-urlencoded');
  });

  it('has no body and no content type without a body', () => {
    const prepared = prepareHttpRequest(httpTask(), scope());
    expect(prepared.body).toBeNull();
    expect(prepared.headers).toEqual({});
  });
});

describe('secretParameters: what jobs show --reveal masks', () => {
  it('names the parameters written into a secret header or basic authentication, once each', () => {
    const task = httpTask({
      headers: [
        named('Authorization', 'Bearer ${token}', 'header'),
        named('X-Api-Key', '${env:KEY}-${tenant}', 'header'),
        named('X-Customer', '${customer}', 'header'),
      ],
      basicAuth: { username: tpl('${user}', 'header'), password: tpl('${token}', 'header') },
    });
    expect(secretParameters(task)).toEqual(['token', 'tenant', 'user']);
  });

  it('names none for a task without secrets, nor system or intermediate values in them', () => {
    expect(secretParameters(httpTask({ headers: [named('X-Customer', '${id}', 'header')] }))).toEqual([]);
    expect(secretParameters(httpTask({ headers: [named('Authorization', 'Bearer ${request-id} ${t}', 'header', ['t'])] }))).toEqual([]);
  });
});

describe('prepareHttpRequest: header values node:http would refuse', () => {
  const refusal = (run: () => unknown): UnsafeValueError => {
    try {
      run();
    } catch (error) {
      if (error instanceof UnsafeValueError) return error;
      throw error;
    }
    throw new Error('expected an UnsafeValueError');
  };

  it('blames the placeholder whose value holds the character (a 400 naming the parameter)', () => {
    const task = httpTask({ headers: [named('X-Token', 'id ${id} of ${name}', 'header')] });
    const error = refusal(() => prepareHttpRequest(task, scope({ id: '7', name: 'a\u007fb' })));
    expect(error.reason).toBe('contains a character that is not allowed in an HTTP header value');
    expect(error.culprits).toEqual([{ kind: 'parameter', name: 'name' }]);
  });

  it('blames no parameter when the written text holds it (the configuration: a 500)', () => {
    const task = httpTask({ headers: [named('X-Token', 'a\u2028 ${id}', 'header')] });
    expect(refusal(() => prepareHttpRequest(task, scope({ id: '7' }))).culprits).toEqual([]);
  });

  it('sends TAB and Latin-1 as node:http does', () => {
    const task = httpTask({ headers: [named('X-Name', '${name}', 'header')] });
    expect(prepareHttpRequest(task, scope({ name: 'a\tb é' })).headers['x-name']).toBe('a\tb é');
  });
});

describe('prepareHttpRequest: <forward-request-body/>', () => {
  const forward = () => httpTask({ method: 'POST', body: { kind: 'forward' } });

  it('sends the request body as received, with its Content-Type (charset included)', () => {
    const received = { contentType: 'application/json; charset=utf-8', size: 9, source: { kind: 'buffer', content: Buffer.from('{"a": 1}\n') } } as const;
    const prepared = prepareHttpRequest(forward(), scope(), DEFAULT_HTTP_REQUEST_SETTINGS, received);
    expect(prepared.body).toBe(received);
    expect(prepared.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('lets a Content-Type the task writes win', () => {
    const task = httpTask({ method: 'POST', body: { kind: 'forward' }, headers: [named('Content-Type', 'text/plain', 'header')] });
    const received = { contentType: 'application/json', size: 2, source: { kind: 'buffer', content: Buffer.from('{}') } } as const;
    expect(prepareHttpRequest(task, scope(), DEFAULT_HTTP_REQUEST_SETTINGS, received).headers['content-type']).toBe('text/plain');
  });

  it('forwards an empty body without a type when the request had none', () => {
    const prepared = prepareHttpRequest(forward(), scope(), DEFAULT_HTTP_REQUEST_SETTINGS, null);
    expect(prepared.body).toBe('');
    expect(prepared.headers['content-type']).toBeUndefined();
  });
});
