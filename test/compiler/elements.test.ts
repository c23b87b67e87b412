// Per element: the compiled AST holds what the XML says. The bundled example first (it is what
// users copy), then small inline applications, one concern each.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileApplication, type Task } from '../../src/compiler/index.js';
import type { EmailTask } from '../../src/tasks/email/types.js';
import type { HttpRequestTask } from '../../src/tasks/http-request/types.js';
import { TASK_KINDS } from '../../src/tasks/registry.js';
import { compileOk, compileXml, endpointOf, lit, param, writeApp } from './helpers.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures');

/** A JSONPath compiled with the file (compiler/json-path.ts), evaluated when the answer comes. */
const compiledQuery = expect.objectContaining({ select: expect.any(Function) }) as unknown;

const http = (t: Task | undefined): HttpRequestTask => {
  expect(t?.kind).toBe('http-request');
  return t as HttpRequestTask;
};
const email = (t: Task | undefined): EmailTask => {
  expect(t?.kind).toBe('email');
  return t as EmailTask;
};

describe('fixtures/contact-form (the bundled example)', () => {
  const file = path.join(FIXTURES, 'contact-form', 'endpoints.xml');
  const result = compileApplication(file, { kinds: TASK_KINDS.list, mode: 'validate', env: { CRM_API_KEY: 'k' } });
  const app = result.application!;
  const contact = app.endpointsByName.get('contact')!;
  const byId = (id: string) => contact.tasks.find((t) => t.id === id);

  it('compiles without any diagnostic when its variable is set', () => {
    expect(result.diagnostics).toEqual([]);
    expect(app).not.toBeNull();
    expect(app.endpoints.map((e) => e.name)).toEqual(['contact', 'form', 'thank-you']);
    expect(app.directory).toBe(path.dirname(file));
    expect(app.staticDirectory).toBe(path.join(path.dirname(file), 'static'));
  });

  it('warns (only) about the unset variable, once, at its first use, listing the other', () => {
    const r = compileApplication(file, { kinds: TASK_KINDS.list, mode: 'validate', env: {} });
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.line, d.otherPositions])).toEqual([['warning', 'env-not-set', 19, [{ line: 27, column: 40 }]]]);
    expect(r.diagnostics[0]!.message).toContain('It is used 1 more time in this file: line 27.');
    expect(r.application).not.toBeNull();
  });

  it('gives the same diagnostics without an application when only diagnostics are asked for', () => {
    const r = compileApplication(file, { kinds: TASK_KINDS.list, mode: 'validate', env: {}, diagnosticsOnly: true });
    expect(r.diagnostics).toEqual(compileApplication(file, { kinds: TASK_KINDS.list, mode: 'validate', env: {} }).diagnostics);
    expect(r.diagnostics).toHaveLength(1);
    expect(r.application).toBeNull();
    expect([r.errorCount, r.warningCount]).toEqual([0, 1]);
  });

  it('declares the fields on the endpoint that requires them, and applies defaults', () => {
    expect(contact.parameters.map((p) => [p.name, p.defaultValue])).toEqual([
      ['name', null],
      ['email', null],
      ['message', null],
      ['newsletter', 'no'],
    ]);
    expect(contact.separator).toBe('||');
    expect(contact.tasksMode).toBe('wait');
    expect(contact.includeInHash).toBeNull();
    // The form page and the thank-you page require nothing: a GET with no fields answers them.
    for (const page of ['form', 'thank-you']) expect(app.endpointsByName.get(page)!.parameters, page).toEqual([]);
    expect(app.endpointsByName.get('form')!.successes[0]!.action).toMatchObject({ kind: 'static' });
  });

  it('redirects with a url template', () => {
    expect(contact.successes).toHaveLength(1);
    const s = contact.successes[0]!;
    expect(s.condition).toBeNull();
    expect(s.action).toMatchObject({ kind: 'redirect', whitelist: [] });
    const url = (s.action as { url: { escaping: string; parts: unknown } }).url;
    expect(url.escaping).toBe('url');
    expect(url.parts).toEqual([lit('thank-you?name='), param('name')]);
    expect(contact.error).toEqual({ action: { kind: 'empty' }, position: null });
  });

  it('compiles create-contact: POST by its JSON body, header from env, output with anchored regex', () => {
    const t = http(byId('create-contact'));
    expect(t.method).toBe('POST');
    expect(t.timeoutMs).toBe(5000);
    expect(t.retries).toBe(2);
    expect(t.headers.map((h) => [h.name, h.value.escaping, h.value.parts])).toEqual([['X-Api-Key', 'header', [{ kind: 'env', name: 'CRM_API_KEY' }]]]);
    expect(t.body?.kind).toBe('json');
    const body = (t.body as { template: { parts: unknown } }).template;
    // Re-serialised compactly; only the string values hold placeholders.
    expect(body.parts).toEqual([lit('{"name":"'), param('name'), lit('","email":"'), param('email'), lit('","source":"contact-form"}')]);
    expect(t.outputs.map((o) => ({ ...o, regex: o.regex?.source }))).toEqual([
      { name: 'contact-id', selector: { kind: 'jsonpath', path: '$.id', query: compiledQuery }, regex: '[0-9]+' },
    ]);
    expect(t.outputs[0]!.regex!.matchesWhole('17')).toBe(true);
    expect(t.outputs[0]!.regex!.matchesWhole('17a')).toBe(false);
  });

  it('compiles add-note with its intermediate input and subscribe with condition and form body', () => {
    const note = http(byId('add-note'));
    expect(note.inputs).toEqual(['contact-id']);
    expect(note.url.parts).toEqual([lit('http://127.0.0.1:4000/crm/contacts/'), { kind: 'intermediate', name: 'contact-id' }, lit('/notes')]);
    expect(note.retries).toBe(0);

    const sub = http(byId('subscribe'));
    expect(sub.ignoreIfError).toBe(true);
    expect(sub.method).toBe('POST');
    expect(sub.condition).toMatchObject({ kind: 'compare', operator: 'equals', text: '${newsletter} equals "yes"' });
    const form = sub.body;
    if (form?.kind !== 'form') throw new Error('form body expected');
    expect(form.parameters.map((p) => [p.name, p.value.parts])).toEqual([
      ['email', [param('email')]],
      ['list', [lit('monthly')]],
    ]);
  });

  it('compiles notify-office: addresses, two bodies, cid image, attachments with a condition', () => {
    const t = email(byId('notify-office'));
    expect(t.after).toEqual(['create-contact']);
    expect(t.from.parts).toEqual([lit('contact-form@example.com')]);
    expect(t.to.map((x) => x.parts)).toEqual([[lit('office@example.com')]]);
    expect(t.replyTo?.parts).toEqual([param('email')]);
    expect(t.subject.parts).toEqual([lit('Contact from '), param('name')]);
    expect(t.bodies.map((b) => [b.contentType, b.template.escaping])).toEqual([
      ['text/plain', 'none'],
      ['text/html', 'html'],
    ]);
    expect(t.bodies[0]!.template.parts).toEqual([param('name'), lit(' <'), param('email'), lit('> wrote:\n\n'), param('message'), lit('\n')]);
    expect(t.bodies[1]!.inlineImages).toEqual([{ cid: 'logo.png', absolutePath: path.join(app.staticDirectory, 'logo.png') }]);
    expect(t.attachments.map((a) => a.kind)).toEqual(['uploads', 'static']);
    const att = t.attachments[1]!;
    expect(att).toMatchObject({ kind: 'static', filename: 'privacy-notice.txt', absolutePath: path.join(app.staticDirectory, 'privacy-notice.txt') });
    expect(att.condition).toMatchObject({ kind: 'compare', operator: 'equals' });
  });

  it('computes the task graph and stages', () => {
    const g = contact.taskGraph;
    expect(g.order).toEqual(['create-contact', 'add-note', 'subscribe', 'notify-office']);
    expect(g.dependsOn.get('add-note')).toEqual(['create-contact']);
    expect(g.dependsOn.get('notify-office')).toEqual(['create-contact']);
    expect(g.stages).toEqual([
      ['create-contact', 'subscribe'],
      ['add-note', 'notify-office'],
    ]);
    expect(g.cycles).toEqual([]);
  });

  it('serves thank-you from static/ and reads the SMTP settings', () => {
    const action = app.endpointsByName.get('thank-you')!.successes[0]!.action;
    expect(action).toMatchObject({
      kind: 'static',
      filename: 'thank-you.html',
      absolutePath: path.join(app.staticDirectory, 'thank-you.html'),
      contentType: 'text/html; charset=utf-8',
      downloadFilename: null,
    });
    expect(app.email).toMatchObject({ port: 2525, username: null, password: null });
    expect(app.email!.server!.parts).toEqual([lit('127.0.0.1')]);
    expect(app.email!.headers.map((h) => [h.name, h.value.parts])).toEqual([['X-Sent-By', [lit('endpoint-service contact form')]]]);
    expect(app.security).toBeNull();
  });
});

describe('folders, parameters and separators', () => {
  const app = compileOk(`<endpoint-folder multiple-value-separator=",">
  <parameter name="a" default-value="root-a"/>
  <parameter name="b"/>
  <endpoint name="top"/>
  <endpoint-folder>
    <parameter name="a" default-value="mid-a"/>
    <parameter name="c"/>
    <endpoint-folder multiple-value-separator=";">
      <parameter name="b" default-value="deep-b"/>
      <endpoint name="deep">
        <parameter name="c" default-value="own-c"/>
        <parameter name="d"/>
      </endpoint>
      <endpoint name="deep-own-separator" multiple-value-separator="|"/>
    </endpoint-folder>
    <endpoint name="mid"/>
  </endpoint-folder>
</endpoint-folder>`);
  const ep = (n: string) => app.endpointsByName.get(n)!;
  const table = (n: string) => Object.fromEntries(ep(n).parameters.map((p) => [p.name, p.defaultValue]));

  it('lists endpoints in file order, depth first', () => {
    expect(app.endpoints.map((e) => e.name)).toEqual(['top', 'deep', 'deep-own-separator', 'mid']);
  });

  it('inherits parameters through nested folders, lower declarations overriding', () => {
    expect(table('top')).toEqual({ a: 'root-a', b: null });
    expect(table('mid')).toEqual({ a: 'mid-a', b: null, c: null });
    expect(table('deep')).toEqual({ a: 'mid-a', b: 'deep-b', c: 'own-c', d: null });
    expect(ep('deep').parametersByName.get('c')!.defaultValue).toBe('own-c');
    expect(ep('deep').parameters).toHaveLength(ep('deep').parametersByName.size);
  });

  it('does not leak a deeper declaration into a sibling or parent', () => {
    expect(ep('mid').parametersByName.has('d')).toBe(false);
    expect(ep('top').parametersByName.has('c')).toBe(false);
  });

  it('inherits and overrides multiple-value-separator', () => {
    expect(ep('top').separator).toBe(',');
    expect(ep('mid').separator).toBe(',');
    expect(ep('deep').separator).toBe(';');
    expect(ep('deep-own-separator').separator).toBe('|');
  });

  it('defaults the separator to ||', () => {
    expect(endpointOf('').separator).toBe('||');
  });

  it('keeps default-value literally, an empty default included', () => {
    const e = endpointOf('<parameter name="x" default-value=""/><parameter name="y" default-value="a &amp; b"/>');
    expect(e.parametersByName.get('x')!.defaultValue).toBe('');
    expect(e.parametersByName.get('y')!.defaultValue).toBe('a & b');
  });

  it('decodes character references (&#233; &#x41;) in text and attributes, once', () => {
    const e = endpointOf(
      `<parameter name="p" default-value="caf&#233; &amp;#233;"/><success><response-body>&#x41;&#60;b&#62; &amp;lt; <![CDATA[&#233;]]></response-body></success>`,
    );
    expect(e.parametersByName.get('p')!.defaultValue).toBe('café &#233;');
    const a = e.successes[0]!.action;
    if (a.kind !== 'body') throw new Error('body expected');
    expect(a.body.parts).toEqual([lit('A<b> &lt; &#233;')]);
  });

  it('reads tasks="background" and include-in-hash in order (with security.xml)', () => {
    const app2 = compileOk(
      `<endpoint-folder><parameter name="email"/><endpoint name="e" tasks="background"><parameter name="amount"/>
  <include-in-hash><parameter name="amount"/><parameter name="email"/></include-in-hash></endpoint></endpoint-folder>`,
      { 'security.xml': '<security><secret-key>one</secret-key><secret-key>${env:KEY_TWO}</secret-key></security>' },
      { env: { KEY_TWO: 'two' } },
    );
    const e = app2.endpoints[0]!;
    expect(e.tasksMode).toBe('background');
    expect(e.includeInHash).toEqual(['amount', 'email']);
    expect(app2.security!.secretKeys.map((k) => k.parts)).toEqual([[lit('one')], [{ kind: 'env', name: 'KEY_TWO' }]]);
  });

  it('gives a declared parameter named like a system parameter precedence in templates (with a warning)', () => {
    const r = compileXml(
      '<endpoint-folder><endpoint name="e"><parameter name="endpoint"/><success><response-body>${endpoint} ${environment}</response-body></success></endpoint></endpoint-folder>',
    );
    expect(r.diagnostics.map((d) => d.code)).toEqual(['parameter-shadows-system']);
    const action = r.application!.endpoints[0]!.successes[0]!.action as { body: { parts: unknown } };
    expect(action.body.parts).toEqual([param('endpoint'), lit(' '), { kind: 'system', name: 'environment' }]);
  });
});

describe('actions', () => {
  it('redirect-to with whitelist entries', () => {
    const e = endpointOf(`<parameter name="next"/><success>
      <redirect-to>  \${next}?from=\${endpoint}  </redirect-to>
      <redirect-prefix-whitelist-entry>https://good.example</redirect-prefix-whitelist-entry>
      <redirect-prefix-whitelist-entry> https://also.example/path/ </redirect-prefix-whitelist-entry>
    </success>`);
    const a = e.successes[0]!.action;
    expect(a.kind).toBe('redirect');
    if (a.kind !== 'redirect') return;
    expect(a.whitelist).toEqual(['https://good.example', 'https://also.example/path/']);
    expect(a.url.escaping).toBe('url');
    expect(a.url.parts).toEqual([param('next'), lit('?from='), { kind: 'system', name: 'endpoint' }]);
  });

  it('response-from-static: absolute path, content type by extension, download-filename template', () => {
    const e = endpointOf(
      `<parameter name="id"/><success if="\${id}" equals="1"><response-from-static filename="docs/report.PDF" download-filename="report-\${id}.pdf"/></success>
       <success><response-from-static filename="data.unknownext"/></success>`,
      { 'static/docs/report.PDF': '%PDF', 'static/data.unknownext': 'x' },
    );
    const [first, second] = e.successes.map((s) => s.action);
    expect(first).toMatchObject({ kind: 'static', filename: 'docs/report.PDF', contentType: 'application/pdf' });
    if (first?.kind !== 'static' || second?.kind !== 'static') throw new Error('static expected');
    expect(path.isAbsolute(first.absolutePath)).toBe(true);
    expect(first.absolutePath.endsWith(path.join('static', 'docs', 'report.PDF'))).toBe(true);
    expect(first.downloadFilename?.parts).toEqual([lit('report-'), param('id'), lit('.pdf')]);
    expect(second.contentType).toBe('application/octet-stream');
    expect(second.downloadFilename).toBeNull();
  });

  it('response-from-url with a url template and a literal download-filename', () => {
    const e = endpointOf(
      `<parameter name="q"/><success><response-from-url download-filename="out.csv"><url>https://data.example/export?q=\${q}</url></response-from-url></success>`,
    );
    const a = e.successes[0]!.action;
    expect(a.kind).toBe('url');
    if (a.kind !== 'url') return;
    expect(a.url.escaping).toBe('url');
    expect(a.url.parts).toEqual([lit('https://data.example/export?q='), param('q')]);
    expect(a.downloadFilename?.parts).toEqual([lit('out.csv')]);
  });

  it('forward-to-endpoint without input-parameter passes bound parameters (null), with them only those', () => {
    const app = compileOk(`<endpoint-folder>
      <parameter name="email"/>
      <endpoint name="target"/>
      <endpoint name="plain"><success><forward-to-endpoint endpoint-name="target"/></success></endpoint>
      <endpoint name="mapped"><success><forward-to-endpoint endpoint-name="target">
        <input-parameter name="address"> \${email} </input-parameter>
        <input-parameter name="source">mapped</input-parameter>
      </forward-to-endpoint></success></endpoint>
    </endpoint-folder>`);
    expect(app.endpointsByName.get('plain')!.successes[0]!.action).toMatchObject({ kind: 'forward', endpoint: 'target', inputParameters: null });
    const a = app.endpointsByName.get('mapped')!.successes[0]!.action;
    if (a.kind !== 'forward') throw new Error('forward expected');
    expect(a.endpoint).toBe('target');
    expect(a.inputParameters!.map((p) => [p.name, p.value.parts])).toEqual([
      ['address', [param('email')]],
      ['source', [lit('mapped')]],
    ]);
  });

  it('forward chains without a cycle are fine (a -> b -> c, d -> c)', () => {
    const app = compileOk(`<endpoint-folder>
      <endpoint name="a"><success><forward-to-endpoint endpoint-name="b"/></success></endpoint>
      <endpoint name="b"><success><forward-to-endpoint endpoint-name="c"/></success></endpoint>
      <endpoint name="c"/>
      <endpoint name="d"><success><forward-to-endpoint endpoint-name="c"/></success></endpoint>
    </endpoint-folder>`);
    expect(app.endpoints).toHaveLength(4);
  });

  it('response-body defaults: no status written (200 for a success), text/plain; charset=utf-8, values as is', () => {
    const e = endpointOf(`<parameter name="n"/><success><response-body>Hi \${n} &amp; &lt;b&gt;</response-body></success>`);
    const a = e.successes[0]!.action;
    expect(a).toMatchObject({ kind: 'body', status: null, contentType: 'text/plain; charset=utf-8' });
    if (a.kind !== 'body') return;
    expect(a.body.escaping).toBe('none');
    expect(a.body.parts).toEqual([lit('Hi '), param('n'), lit(' & <b>')]);
  });

  it('response-body JSON: status and content type kept, structure re-serialised, literal strings JSON-escaped', () => {
    const e = endpointOf(`<parameter name="n"/><success><response-body status="201" content-type="application/json; charset=utf-8"><![CDATA[
      { "name" : "\${n}", "quote": "say \\"hi\\"\\n", "list": [1, 2.5, true, null], "nested": {"x": "<&>"} }
    ]]></response-body></success>`);
    const a = e.successes[0]!.action;
    expect(a).toMatchObject({ kind: 'body', status: 201, contentType: 'application/json; charset=utf-8' });
    if (a.kind !== 'body') return;
    expect(a.body.escaping).toBe('json');
    expect(a.body.parts).toEqual([lit('{"name":"'), param('n'), lit('","quote":"say \\"hi\\"\\n","list":[1,2.5,true,null],"nested":{"x":"<&>"}}')]);
  });

  it('response-body with a +json media type is JSON too', () => {
    const e = endpointOf(`<success><response-body content-type="application/problem+json">{"a": "b"}</response-body></success>`);
    const a = e.successes[0]!.action;
    if (a.kind !== 'body') throw new Error('body expected');
    expect(a.body.escaping).toBe('json');
    expect(a.body.parts).toEqual([lit('{"a":"b"}')]);
  });

  it('response-body XML: parsed, literal text and attributes XML-escaped, values escaped per request', () => {
    const e = endpointOf(
      `<parameter name="id"/><success><response-body content-type="application/xml"><![CDATA[<r id="\${id}" k="a&amp;b"><t>x &lt; y \${id}</t></r>]]></response-body></success>`,
    );
    const a = e.successes[0]!.action;
    if (a.kind !== 'body') throw new Error('body expected');
    expect(a.body.escaping).toBe('xml');
    expect(a.body.parts).toEqual([lit('<r id="'), param('id'), lit('" k="a&amp;b"><t>x &lt; y '), param('id'), lit('</t></r>')]);
  });

  it('response-body HTML: markup kept, values HTML-escaped', () => {
    const e = endpointOf(
      `<parameter name="n"/><success><response-body content-type="text/html"><![CDATA[<p>Hello <b>\${n}</b></p>]]></response-body></success>`,
    );
    const a = e.successes[0]!.action;
    if (a.kind !== 'body') throw new Error('body expected');
    expect(a.body.escaping).toBe('html');
    expect(a.body.parts).toEqual([lit('<p>Hello <b>'), param('n'), lit('</b></p>')]);
  });

  it('<error> action: system parameters and ${internal-error-text}', () => {
    const e = endpointOf(`<parameter name="n"/><error><response-body status="503">\${request-id}: \${internal-error-text}</response-body></error>`);
    expect(e.error.action).toMatchObject({ kind: 'body', status: 503 });
    if (e.error.action.kind !== 'body') return;
    expect(e.error.action.body.parts).toEqual([{ kind: 'system', name: 'request-id' }, lit(': '), { kind: 'internal-error-text' }]);
    expect(e.error.position).not.toBeNull();
  });

  it('an empty <success> or none at all means an empty 200; conditional successes keep file order', () => {
    expect(endpointOf('').successes).toEqual([]);
    const e = endpointOf(
      `<parameter name="p"/><success if="\${p}" equals="a"><response-body>A</response-body></success><success if="\${p}" equals="b"/><success/>`,
    );
    expect(e.successes.map((s) => [s.condition?.text ?? null, s.action.kind])).toEqual([
      ['${p} equals "a"', 'body'],
      ['${p} equals "b"', 'empty'],
      [null, 'empty'],
    ]);
  });

  it('a <success> waiting for tasks lists them once: after plus producers of its inputs', () => {
    const e = endpointOf(`<task class="HttpRequest" id="make"><url>https://x.example/</url><output-intermediate-value name="v" jsonpath="$.v"/></task>
      <task class="HttpRequest" id="other"><url>https://x.example/</url></task>
      <success><after task-id="make"/><after task-id="other"/><input-intermediate-value name="v"/><response-body>\${v}</response-body></success>`);
    const s = e.successes[0]!;
    expect(s.inputs).toEqual(['v']);
    expect([...s.after].sort()).toEqual(['make', 'other']);
    if (s.action.kind !== 'body') throw new Error('body expected');
    expect(s.action.body.parts).toEqual([{ kind: 'intermediate', name: 'v' }]);
  });
});

describe('conditions', () => {
  const ops = ['equals', 'notequals', 'gt', 'ge', 'lt', 'le'] as const;
  for (const op of ops) {
    it(`compiles ${op} with templates on both sides`, () => {
      const e = endpointOf(`<parameter name="a"/><parameter name="b"/><success if="\${a}" ${op}="x\${b}"/>`);
      const c = e.successes[0]!.condition!;
      expect(c.kind).toBe('compare');
      if (c.kind !== 'compare') return;
      expect(c.operator).toBe(op);
      expect(c.left.parts).toEqual([param('a')]);
      expect(c.right.parts).toEqual([lit('x'), param('b')]);
      expect(c.left.escaping).toBe('none');
      expect(c.text).toBe(`\${a} ${op} "x\${b}"`);
    });
  }
  for (const op of ['isempty', 'hasmultiple'] as const) {
    for (const value of ['true', 'false']) {
      it(`compiles ${op}="${value}"`, () => {
        const e = endpointOf(`<parameter name="a"/><success if="\${a}" ${op}="${value}"/>`);
        expect(e.successes[0]!.condition).toMatchObject({ kind: 'predicate', operator: op, expected: value === 'true', text: `\${a} ${op} "${value}"` });
      });
    }
  }

  it('conditions on tasks and attachments', () => {
    const e = endpointOf(
      `<parameter name="a"/><task class="Email" if="\${a}" notequals="no"><from>f@x.example</from><to>t@x.example</to><subject>s</subject><body>b</body>
        <attachment-static filename="f.txt" if="\${a}" hasmultiple="true"/><attachments-from-request-file-uploads if="\${a}" isempty="false"/></task>`,
      { 'static/f.txt': 'f' },
      { smtpUrlGiven: true },
    );
    const t = email(e.tasks[0]);
    expect(t.condition).toMatchObject({ kind: 'compare', operator: 'notequals' });
    expect(t.attachments.map((a) => a.condition)).toEqual([
      expect.objectContaining({ kind: 'predicate', operator: 'hasmultiple', expected: true }),
      expect.objectContaining({ kind: 'predicate', operator: 'isempty', expected: false }),
    ]);
  });
});

describe('HttpRequest tasks', () => {
  it('accepts short and long class names; className is kept as written', () => {
    const e = endpointOf(
      `<task class="HttpRequest"><url>https://a.example/</url></task>
      <task class="endpoints.task.HttpRequestTask"><url>https://a.example/</url></task>
      <task class="Email"><from>a@x.example</from><to>b@x.example</to><subject>s</subject><body>b</body></task>
      <task class="endpoints.task.EmailTask"><from>a@x.example</from><to>b@x.example</to><subject>s</subject><body>b</body></task>`,
      {},
      { smtpUrlGiven: true },
    );
    expect(e.tasks.map((t) => [t.kind, t.className])).toEqual([
      ['http-request', 'HttpRequest'],
      ['http-request', 'endpoints.task.HttpRequestTask'],
      ['email', 'Email'],
      ['email', 'endpoints.task.EmailTask'],
    ]);
  });

  it('names tasks without id task-N by their position among all the endpoint tasks', () => {
    const e = endpointOf(`<task class="HttpRequest"><url>https://a.example/1</url></task>
      <task class="HttpRequest" id="named"><url>https://a.example/2</url></task>
      <task class="HttpRequest"><url>https://a.example/3</url></task>`);
    expect(e.tasks.map((t) => [t.id, t.explicitId])).toEqual([
      ['task-1', false],
      ['named', true],
      ['task-3', false],
    ]);
  });

  it('resolves the method: GET by default, POST with any body, explicit wins, case-insensitive', () => {
    const e = endpointOf(`<task class="HttpRequest" id="get"><url>https://a.example/</url></task>
      <task class="HttpRequest" id="json"><url>https://a.example/</url><json-body>{}</json-body></task>
      <task class="HttpRequest" id="xml"><url>https://a.example/</url><xml-body><a/></xml-body></task>
      <task class="HttpRequest" id="form"><url>https://a.example/</url><post-parameter name="a">1</post-parameter></task>
      <task class="HttpRequest" id="put"><url>https://a.example/</url><method name="PUT"/><json-body>{}</json-body></task>
      <task class="HttpRequest" id="delete"><url>https://a.example/</url><method name="delete"/></task>
      <task class="HttpRequest" id="head"><url>https://a.example/</url><method name="HEAD"/></task>`);
    expect(e.tasks.map((t) => [t.id, http(t).method, http(t).body?.kind ?? null])).toEqual([
      ['get', 'GET', null],
      ['json', 'POST', 'json'],
      ['xml', 'POST', 'xml'],
      ['form', 'POST', 'form'],
      ['put', 'PUT', 'json'],
      ['delete', 'DELETE', null],
      ['head', 'HEAD', null],
    ]);
  });

  it('form-escapes literal parts of get- and post-parameters; values are escaped per request', () => {
    const e = endpointOf(`<parameter name="q"/><task class="HttpRequest">
      <url>https://a.example/search?lang=en</url>
      <get-parameter name="q">  a b&amp;c=d!'()~*  \${q}  </get-parameter>
      <get-parameter name="plain">x</get-parameter>
    </task>
    <task class="HttpRequest"><url>https://a.example/</url><post-parameter name="note">50% off + more</post-parameter></task>`);
    const [t1, t2] = e.tasks.map(http);
    expect(t1!.getParameters.map((p) => [p.name, p.value.escaping, p.value.parts])).toEqual([
      ['q', 'form', [lit('a+b%26c%3Dd%21%27%28%29%7E*++'), param('q')]],
      ['plain', 'form', [lit('x')]],
    ]);
    expect(t1!.url.parts).toEqual([lit('https://a.example/search?lang=en')]);
    const body = t2!.body;
    if (body?.kind !== 'form') throw new Error('form body expected');
    expect(body.parameters[0]!.value.parts).toEqual([lit('50%25+off+%2B+more')]);
  });

  it('reads request headers and basic auth as header templates', () => {
    const t = http(
      endpointOf(
        `<parameter name="tenant"/><task class="HttpRequest"><url>https://a.example/</url>
        <request-header name="X-Tenant">t-\${tenant}</request-header>
        <request-header name="Content-Type">application/vnd.api+json</request-header>
        <basic-access-authentication username="svc-\${tenant}" password="\${env:API_PASSWORD}"/>
        <json-body>{}</json-body></task>`,
        {},
        { env: { API_PASSWORD: 'pw' } },
      ).tasks[0],
    );
    expect(t.headers.map((h) => [h.name, h.value.escaping, h.value.parts])).toEqual([
      ['X-Tenant', 'header', [lit('t-'), param('tenant')]],
      ['Content-Type', 'header', [lit('application/vnd.api+json')]],
    ]);
    expect(t.basicAuth!.username.parts).toEqual([lit('svc-'), param('tenant')]);
    expect(t.basicAuth!.password.parts).toEqual([{ kind: 'env', name: 'API_PASSWORD' }]);
    expect(t.basicAuth!.username.escaping).toBe('header');
  });

  it('json-body: placeholders only in string values, structure compact, literal text JSON-escaped', () => {
    const t = http(
      endpointOf(`<parameter name="p"/><task class="HttpRequest"><url>https://a.example/</url><json-body>
      {
        "text": "tab\\there \${p} end",
        "n": -1.5e3,
        "arr": [ "\${p}", {"deep": ["\${request-id}"]} ],
        "unicode": "\\u00e9\\u2028"
      }
      </json-body></task>`).tasks[0],
    );
    const b = t.body as { kind: 'json'; template: { escaping: string; parts: unknown } };
    expect(b.kind).toBe('json');
    expect(b.template.escaping).toBe('json');
    expect(b.template.parts).toEqual([
      lit('{"text":"tab\\there '),
      param('p'),
      lit(' end","n":-1500,"arr":["'),
      param('p'),
      lit('",{"deep":["'),
      { kind: 'system', name: 'request-id' },
      lit('"]}],"unicode":"é\\u2028"}'),
    ]);
  });

  it('xml-body inline: one element, attributes and text as XML templates', () => {
    const t = http(
      endpointOf(`<parameter name="id"/><parameter name="note"/><task class="HttpRequest"><url>https://a.example/</url><xml-body>
        <order id="\${id}" xmlns="urn:x"><note>a &amp; b \${note}</note><empty/></order>
      </xml-body></task>`).tasks[0],
    );
    const b = t.body as { kind: 'xml'; template: { escaping: string; parts: unknown } };
    expect(b.kind).toBe('xml');
    expect(b.template.escaping).toBe('xml');
    expect(b.template.parts).toEqual([lit('<order id="'), param('id'), lit('" xmlns="urn:x"><note>a &amp; b '), param('note'), lit('</note><empty/></order>')]);
  });

  it('xml-body in CDATA compiles like the inline form', () => {
    const t = http(
      endpointOf(
        `<parameter name="id"/><task class="HttpRequest"><url>https://a.example/</url><xml-body><![CDATA[<order id="\${id}"><n>1 &lt; 2</n></order>]]></xml-body></task>`,
      ).tasks[0],
    );
    const b = t.body as { kind: 'xml'; template: { parts: unknown } };
    expect(b.template.parts).toEqual([lit('<order id="'), param('id'), lit('"><n>1 &lt; 2</n></order>')]);
  });

  it('outputs: jsonpath and xpath selectors, regex anchored to the whole value', () => {
    const t = http(
      endpointOf(`<task class="HttpRequest"><url>https://a.example/</url>
        <output-intermediate-value name="a" jsonpath="$.data[0].id"/>
        <output-intermediate-value name="b" xpath="/r/item[@k='v']/text()" regex="\\d+|x"/>
      </task>`).tasks[0],
    );
    expect(t.outputs.map((o) => [o.name, o.selector, o.regex?.source ?? null])).toEqual([
      ['a', { kind: 'jsonpath', path: '$.data[0].id', query: compiledQuery }, null],
      ['b', { kind: 'xpath', path: "/r/item[@k='v']/text()" }, '\\d+|x'],
    ]);
    // Anchoring keeps alternation inside the group: "1x" must not match.
    const re = t.outputs[1]!.regex!;
    expect(re.matchesWhole('12')).toBe(true);
    expect(re.matchesWhole('x')).toBe(true);
    expect(re.matchesWhole('1x')).toBe(false);
  });

  it('accepts the usual JSONPath and XPath forms (no false syntax errors)', () => {
    const jsonpaths = [
      '$',
      '$.id',
      '$..id',
      "$['a-b'].c",
      '$.items[*].id',
      '$.items[0]',
      '$.items[-1:]',
      "$.items[?(@.name=='x')].id",
      '$.items[?(@.n > 1 &amp;&amp; @.m)].id',
      // RFC 9535 only: no parentheses around a filter, functions, quoted names, negative indexes.
      "$.items[?@.name == 'x'].id",
      '$.items[?length(@.tags) &gt; 0].id',
      '$.items[?count(@.tags[*]) == 1].id',
      "$.items[?match(@.name, 'a.*')].id",
      "$.items[?search(@.name, 'a')].id",
      "$.items[?value(@.tags[0]) == 'x'].id",
      "$['a b']",
      '$.items[-1].id',
    ];
    const xpaths = ['/r/id', "//item[@k='v']/text()", 'count(//a)', 'string(/a)', '/a/@id', 'name(/*)'];
    const outputs = [
      ...jsonpaths.map((p, i) => `<output-intermediate-value name="j${i}" jsonpath="${p}"/>`),
      ...xpaths.map((p, i) => `<output-intermediate-value name="x${i}" xpath="${p}"/>`),
    ];
    const t = http(endpointOf(`<task class="HttpRequest"><url>https://a.example/</url>${outputs.join('')}</task>`).tasks[0]);
    expect(t.outputs).toHaveLength(jsonpaths.length + xpaths.length);
  });

  it('parses timeout and retries; defaults 30s and 0', () => {
    const e = endpointOf(`<task class="HttpRequest" id="d"><url>https://a.example/</url></task>
      <task class="HttpRequest" id="ms" timeout="500ms" retries="3"><url>https://a.example/</url></task>
      <task class="HttpRequest" id="s" timeout="10s"><url>https://a.example/</url></task>
      <task class="HttpRequest" id="m" timeout="2m"><url>https://a.example/</url></task>`);
    expect(e.tasks.map((t) => [t.id, t.timeoutMs, t.retries])).toEqual([
      ['d', 30_000, 0],
      ['ms', 500, 3],
      ['s', 10_000, 0],
      ['m', 120_000, 0],
    ]);
  });

  it('reads ignore-if-error and a condition using an input value', () => {
    const e = endpointOf(`<task class="HttpRequest" id="p"><url>https://a.example/</url><output-intermediate-value name="v" jsonpath="$.v"/></task>
      <task class="HttpRequest" id="c" if="\${v}" equals="yes" ignore-if-error="true"><input-intermediate-value name="v"/><url>https://a.example/</url></task>
      <task class="HttpRequest" id="f" ignore-if-error="false"><url>https://a.example/</url></task>`);
    expect(e.tasks.map((t) => t.ignoreIfError)).toEqual([false, true, false]);
    const c = e.tasks[1]!.condition;
    if (c?.kind !== 'compare') throw new Error('compare expected');
    expect(c.left.parts).toEqual([{ kind: 'intermediate', name: 'v' }]);
  });
});

describe('Email tasks', () => {
  const files = {
    'email-sending-configuration.xml': `<email-sending-configuration>
  <server>\${env:SMTP_HOST}</server>
  <port>465</port>
  <username>mailer</username>
  <password>\${env:SMTP_PASSWORD}</password>
  <header name="X-Mailer">endpoint-service</header>
</email-sending-configuration>`,
    'mail/welcome.html': '<p><img src="cid:img/logo.png"> Hello ${name}</p>\n<img src=\'cid:img/logo.png\'><img src="cid:banner.gif">\n',
    'static/img/logo.png': 'png',
    'static/banner.gif': 'gif',
    'static/terms.pdf': 'pdf',
    // Recipients come from parameters below: with hash authentication that is no warning (recipient-from-request).
    'security.xml': '<security><secret-key>k</secret-key></security>',
  };
  const env = { SMTP_HOST: 'smtp.example', SMTP_PASSWORD: 'pw' };
  const app = compileOk(
    `<endpoint-folder><parameter name="name"/><parameter name="email"/><parameter name="cc"/><endpoint name="e">
    <task class="Email" id="welcome">
      <from>Shop &lt;shop@x.example&gt;</from>
      <to>\${email}</to>
      <to>archive@x.example</to>
      <cc>\${cc}</cc>
      <bcc>audit@x.example</bcc>
      <bcc>audit2@x.example</bcc>
      <reply-to>help@x.example</reply-to>
      <subject>Welcome, \${name}</subject>
      <body>
Hello \${name},
welcome.
      </body>
      <body content-type="text/html" src="mail/welcome.html"/>
      <attachment-static filename="terms.pdf"/>
      <attachments-from-request-file-uploads if="\${cc}" isempty="false"/>
    </task></endpoint></endpoint-folder>`,
    files,
    { env },
  );
  const t = email(app.endpoints[0]!.tasks[0]);

  it('reads addresses and subject as header templates', () => {
    expect(t.from.parts).toEqual([lit('Shop <shop@x.example>')]);
    expect(t.to.map((x) => x.parts)).toEqual([[param('email')], [lit('archive@x.example')]]);
    expect(t.cc.map((x) => x.parts)).toEqual([[param('cc')]]);
    expect(t.bcc.map((x) => x.parts)).toEqual([[lit('audit@x.example')], [lit('audit2@x.example')]]);
    expect(t.replyTo?.parts).toEqual([lit('help@x.example')]);
    expect(t.subject.parts).toEqual([lit('Welcome, '), param('name')]);
    for (const x of [t.from, ...t.to, ...t.cc, ...t.bcc, t.replyTo!, t.subject]) expect(x.escaping).toBe('header');
  });

  it('reads an inline text body (surrounding blank lines dropped) and an HTML body from src=', () => {
    expect(t.bodies.map((b) => b.contentType)).toEqual(['text/plain', 'text/html']);
    expect(t.bodies[0]!.template.parts).toEqual([lit('Hello '), param('name'), lit(',\nwelcome.\n')]);
    const html = t.bodies[1]!;
    expect(html.template.escaping).toBe('html');
    expect(html.template.source).toBe(files['mail/welcome.html']);
  });

  it('resolves each cid: image once to its file in static/', () => {
    expect(t.bodies[1]!.inlineImages.map((i) => [i.cid, path.relative(app.staticDirectory, i.absolutePath)])).toEqual([
      ['img/logo.png', path.join('img', 'logo.png')],
      ['banner.gif', 'banner.gif'],
    ]);
    expect(t.bodies[0]!.inlineImages).toEqual([]);
  });

  it('reads attachments in order, with their conditions', () => {
    expect(t.attachments).toHaveLength(2);
    expect(t.attachments[0]).toMatchObject({
      kind: 'static',
      filename: 'terms.pdf',
      condition: null,
      absolutePath: path.join(app.staticDirectory, 'terms.pdf'),
    });
    expect(t.attachments[1]).toMatchObject({ kind: 'uploads', condition: { kind: 'predicate', operator: 'isempty', expected: false } });
  });

  it('reads email-sending-configuration.xml', () => {
    const s = app.email!;
    expect(s.server!.parts).toEqual([{ kind: 'env', name: 'SMTP_HOST' }]);
    expect(s.port).toBe(465);
    expect(s.username!.parts).toEqual([lit('mailer')]);
    expect(s.password!.parts).toEqual([{ kind: 'env', name: 'SMTP_PASSWORD' }]);
    expect(s.headers.map((h) => [h.name, h.value.parts])).toEqual([['X-Mailer', [lit('endpoint-service')]]]);
  });

  const mailTask = `<task class="Email"><from>a@x.example</from><to>b@x.example</to><subject>s</subject><body>b</body></task>`;
  it('asks for SMTP settings only where they matter: warning for validate, error for serve, nothing for dry-run or with --smtp-url', () => {
    const xml = `<endpoint-folder><endpoint name="e">${mailTask}</endpoint></endpoint-folder>`;
    const codes = (mode: 'validate' | 'serve' | 'dry-run', smtpUrlGiven = false) =>
      compileXml(xml, {}, { mode, smtpUrlGiven }).diagnostics.map((d) => `${d.severity} ${d.code}`);
    expect(codes('validate')).toEqual(['warning smtp-not-configured']);
    expect(codes('serve')).toEqual(['error smtp-not-configured']);
    expect(codes('dry-run')).toEqual([]);
    expect(codes('serve', true)).toEqual([]);
    expect(codes('validate', true)).toEqual([]);
  });

  it('an application without Email tasks needs no SMTP settings', () => {
    expect(compileXml(`<endpoint-folder><endpoint name="e"/></endpoint-folder>`, {}, { mode: 'serve' }).diagnostics).toEqual([]);
  });
});

describe('the task graph', () => {
  it('dependsOn: after and intermediate values, each dependency once; stages as longest-path levels in file order', () => {
    const e = endpointOf(`
      <task class="HttpRequest" id="a"><url>https://x.example/</url><output-intermediate-value name="va" jsonpath="$.a"/><output-intermediate-value name="va2" jsonpath="$.b"/></task>
      <task class="HttpRequest" id="solo"><url>https://x.example/</url></task>
      <task class="HttpRequest" id="b"><after task-id="a"/><input-intermediate-value name="va"/><input-intermediate-value name="va2"/><url>https://x.example/\${va}/\${va2}</url>
        <output-intermediate-value name="vb" jsonpath="$.b"/></task>
      <task class="HttpRequest" id="c"><after task-id="a"/><input-intermediate-value name="vb"/><url>https://x.example/\${vb}</url></task>
      <task class="HttpRequest" id="d"><after task-id="solo"/><url>https://x.example/</url></task>`);
    const g = e.taskGraph;
    expect(g.order).toEqual(['a', 'solo', 'b', 'c', 'd']);
    expect(g.dependsOn.get('a')).toEqual([]);
    expect(g.dependsOn.get('b')).toEqual(['a']);
    expect(g.dependsOn.get('c')).toEqual(['a', 'b']);
    expect(g.dependsOn.get('d')).toEqual(['solo']);
    // c depends on a directly but on b too, so it is a stage after b.
    expect(g.stages).toEqual([['a', 'solo'], ['b', 'd'], ['c']]);
    const ab = g.edges.find((x) => x.from === 'a' && x.to === 'b')!;
    expect(ab).toMatchObject({ after: true, values: ['va', 'va2'] });
    expect(g.dependents.get('a')).toEqual(['b', 'c']);
    expect(g.cycles).toEqual([]);
    expect(e.tasks.map((t) => t.after)).toEqual([[], [], ['a'], ['a'], ['solo']]);
    expect(e.tasks.map((t) => t.inputs)).toEqual([[], [], ['va', 'va2'], ['vb'], []]);
  });

  it('independent tasks form one stage', () => {
    const e = endpointOf(`<task class="HttpRequest"><url>https://x.example/</url></task><task class="HttpRequest"><url>https://x.example/</url></task>`);
    expect(e.taskGraph.stages).toEqual([['task-1', 'task-2']]);
  });
});

describe('files and positions', () => {
  it('reports the path of a referenced file as given on the command line', () => {
    const file = writeApp(`<endpoint-folder><endpoint name="e"/></endpoint-folder>`, { 'security.xml': '<secrets/>' });
    const relative = path.relative(process.cwd(), file);
    const r = compileApplication(relative, { kinds: TASK_KINDS.list, mode: 'validate', env: {} });
    expect(r.diagnostics.map((d) => [d.file, d.code, d.line, d.column])).toEqual([
      [path.join(path.dirname(relative), 'security.xml'), 'wrong-root-element', 1, 1],
    ]);
  });

  it('reports an unreadable endpoints.xml as unreadable, not as a diagnostic', () => {
    const r = compileApplication(path.join(path.dirname(writeApp('<endpoint-folder/>')), 'missing.xml'), { kinds: TASK_KINDS.list, mode: 'validate', env: {} });
    expect(r.unreadable).toMatch(/missing\.xml/);
    expect(r.diagnostics).toEqual([]);
    expect(r.application).toBeNull();
  });

  it('accepts a symlink inside static/ that points inside static/', () => {
    const file = writeApp(
      `<endpoint-folder><endpoint name="e"><success><response-from-static filename="alias.txt"/></success></endpoint></endpoint-folder>`,
      { 'static/real/a.txt': 'a' },
      { 'static/alias.txt': 'real/a.txt' },
    );
    const r = compileApplication(file, { kinds: TASK_KINDS.list, mode: 'validate', env: {} });
    expect(r.diagnostics).toEqual([]);
  });
});

describe('an unset variable used many times', () => {
  // One endpoint per line, each using ${env:KEY} once: line n+1 holds endpoint n.
  const many = (n: number) =>
    '<endpoint-folder>\n' +
    Array.from({ length: n }, (_, i) => `<endpoint name="e${i}"><task class="HttpRequest"><url>https://x.example/\${env:KEY}</url></task></endpoint>\n`).join(
      '',
    ) +
    '</endpoint-folder>\n';

  it('is one diagnostic per command, counted once, with every other use in otherPositions', () => {
    for (const [mode, severity] of [
      ['validate', 'warning'],
      ['dry-run', 'warning'],
      ['serve', 'error'],
    ] as const) {
      const r = compileXml(many(8), {}, { mode, smtpUrlGiven: true });
      expect(r.diagnostics.map((d) => [d.severity, d.code, d.line])).toEqual([[severity, 'env-not-set', 2]]);
      expect([r.errorCount, r.warningCount]).toEqual(severity === 'error' ? [1, 0] : [0, 1]);
      expect(r.diagnostics[0]!.otherPositions!.map((p) => p.line)).toEqual([3, 4, 5, 6, 7, 8, 9]);
      expect(r.diagnostics[0]!.message).toContain('It is used 7 more times in this file, first on lines 3, 4, 5, 6 and 7.');
    }
  });

  it('names every other line when there are five or fewer, and has no otherPositions when used once', () => {
    expect(compileXml(many(3)).diagnostics[0]!.message).toContain('It is used 2 more times in this file: lines 3 and 4.');
    const once = compileXml(many(1)).diagnostics[0]!;
    expect(once.otherPositions).toBeUndefined();
    expect(once.message).not.toContain('more time');
  });
});

describe('files inside the application folder', () => {
  it('takes a file whose name starts with two dots: only a ".." segment leaves the folder', () => {
    const app = compileOk(
      `<endpoint-folder><endpoint name="a"><success><response-from-static filename="..notes.txt"/></success></endpoint></endpoint-folder>`,
      { 'static/..notes.txt': 'notes' },
    );
    expect(app.endpointsByName.get('a')).toBeDefined();
  });

  it('still refuses "../" out of static/', () => {
    const result = compileXml(
      `<endpoint-folder><endpoint name="a"><success><response-from-static filename="../endpoints.xml"/></success></endpoint></endpoint-folder>`,
      { 'static/x.txt': 'x' },
    );
    expect(result.diagnostics.map((d) => d.code)).toContain('file-outside-folder');
  });
});

describe('<forward-request-body/>: which endpoints keep the request body', () => {
  const app = compileOk(`<endpoint-folder>
  <endpoint name="relay">
    <task class="HttpRequest"><url>https://example.com/in</url><forward-request-body/></task>
  </endpoint>
  <endpoint name="front"><success><forward-to-endpoint endpoint-name="middle"/></success></endpoint>
  <endpoint name="middle"><success><forward-to-endpoint endpoint-name="relay"/></success></endpoint>
  <endpoint name="json">
    <task class="HttpRequest"><url>https://example.com/in</url><json-body>{"a": "b"}</json-body></task>
  </endpoint>
  <endpoint name="other"><success><forward-to-endpoint endpoint-name="json"/></success></endpoint>
</endpoint-folder>`);
  const keeps = (name: string) => app.endpointsByName.get(name)!.keepsRequestBody;

  it('an endpoint whose task forwards it, and every endpoint that may forward to that one', () => {
    expect(['relay', 'front', 'middle'].map(keeps)).toEqual([true, true, true]);
    expect(app.endpoints.filter((e) => e.keepsRequestBody).map((e) => e.name)).toEqual(['relay', 'front', 'middle']);
  });

  it('no other endpoint', () => {
    expect(['json', 'other'].map(keeps)).toEqual([false, false]);
  });

  it('defaults the method to POST and compiles a forward body', () => {
    const task = app.endpointsByName.get('relay')!.tasks[0] as unknown as { method: string; body: { kind: string } };
    expect(task.method).toBe('POST');
    expect(task.body).toEqual({ kind: 'forward' });
  });
});
