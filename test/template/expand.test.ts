// expandTemplate per escaping context, on templates compiled by the real compiler where the
// context decides the escaping (so the literal parts are what the compiler produces).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Escaping, Template, TemplatePart } from '../../src/template/types.js';
import { escapeForm, escapeHtml, escapeJsonString, escapeXml, UnsafeValueError } from '../../src/template/escape.js';
import { expandTemplate, MissingValueError, type ExpansionScope } from '../../src/template/expand.js';
import { parseTemplateSource } from '../../src/template/parse.js';

const SYSTEM = {
  'request-id': 'req-1',
  endpoint: 'ep',
  environment: 'live',
  'client-ip': '127.0.0.1',
  'user-agent': 'ua',
  'base-url': 'http://h',
  'body-sha256': '',
} as const;

function scope(parameters: Record<string, string> = {}, extra: Partial<ExpansionScope> = {}): ExpansionScope {
  return { parameters: new Map(Object.entries(parameters)), system: SYSTEM, env: {}, ...extra };
}

/** A template with literal parts as written (already in final form) and `${name}` as parameters. */
function t(source: string, escaping: Escaping): Template {
  const parsed = parseTemplateSource(source);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const parts: TemplatePart[] = parsed.segments.map((s) => (s.kind === 'text' ? { kind: 'literal', text: s.text } : { kind: 'parameter', name: s.name }));
  return { source, escaping, parts };
}

const NASTY = `a b/?&=#%+"'<>\\!~*()é\u2028`;

describe('expandTemplate: url', () => {
  it('inserts a placeholder at the very start as is (scheme and host), later ones with encodeURIComponent', () => {
    const out = expandTemplate(t('${base}/items/${id}?q=${id}', 'url'), scope({ base: 'https://api.example:8443/v1', id: NASTY }));
    expect(out).toBe(`https://api.example:8443/v1/items/${encodeURIComponent(NASTY)}?q=${encodeURIComponent(NASTY)}`);
  });

  it('encodes a placeholder that follows literal text, even a short one', () => {
    expect(expandTemplate(t('/${p}', 'url'), scope({ p: 'a/b' }))).toBe('/a%2Fb');
    expect(expandTemplate(t('https://x.example/${p}', 'url'), scope({ p: "!'()*~-_." }))).toBe("https://x.example/!'()*~-_.");
  });

  it('encodes a second placeholder directly after the first', () => {
    expect(expandTemplate(t('${a}${b}', 'url'), scope({ a: 'https://h/', b: 'x y' }))).toBe('https://h/x%20y');
  });
});

describe('expandTemplate: other contexts', () => {
  it('form: application/x-www-form-urlencoded, as URLSearchParams writes it', () => {
    expect(expandTemplate(t('${v}', 'form'), scope({ v: 'a b&c=d+e' }))).toBe('a+b%26c%3Dd%2Be');
  });

  it('json: JSON string escaping without quotes', () => {
    expect(expandTemplate(t('"${v}"', 'json'), scope({ v: 'say "hi"\\\n\t\u0001\u2028' }))).toBe('"say \\"hi\\"\\\\\\n\\t\\u0001\\u2028"');
  });

  it('xml: the five XML specials', () => {
    expect(expandTemplate(t('<a k="${v}">${v}</a>', 'xml'), scope({ v: `<&>"'` }))).toBe('<a k="&lt;&amp;&gt;&quot;&apos;">&lt;&amp;&gt;&quot;&apos;</a>');
  });

  it('html: values escaped, markup of the template kept', () => {
    expect(expandTemplate(t('<b>${v}</b>', 'html'), scope({ v: `<script>alert('x&y')</script>"` }))).toBe(
      '<b>&lt;script&gt;alert(&#39;x&amp;y&#39;)&lt;/script&gt;&quot;</b>',
    );
  });

  it('none: as is', () => {
    expect(expandTemplate(t('x ${v} y', 'none'), scope({ v: NASTY }))).toBe(`x ${NASTY} y`);
  });

  it('header: a value with CR or LF fails (header injection), tabs and others pass', () => {
    expect(expandTemplate(t('Bearer ${v}', 'header'), scope({ v: 'a\tb: c' }))).toBe('Bearer a\tb: c');
    expect(() => expandTemplate(t('${v}', 'header'), scope({ v: 'x\r\nBcc: evil@example.com' }))).toThrow(UnsafeValueError);
    expect(() => expandTemplate(t('${v}', 'header'), scope({ v: 'x\nBcc: y' }))).toThrow(UnsafeValueError);
    expect(() => expandTemplate(t('${v}', 'header'), scope({ v: 'x\ry' }))).toThrow(UnsafeValueError);
  });

  it('a literal-only template expands to its text; an empty one to ""', () => {
    expect(expandTemplate(t('plain', 'url'), scope())).toBe('plain');
    expect(expandTemplate(t('', 'none'), scope())).toBe('');
  });
});

describe('expandTemplate: single pass and value sources', () => {
  it('never expands a placeholder inside a value', () => {
    const out = expandTemplate(t('${a}|${b}', 'none'), scope({ a: '${b}', b: '${env:SECRET}' }, { env: { SECRET: 's3cret' } }));
    expect(out).toBe('${b}|${env:SECRET}');
  });

  it('reads system parameters, intermediate values, env and internal-error-text', () => {
    const tpl: Template = {
      source: '',
      escaping: 'none',
      parts: [
        { kind: 'system', name: 'request-id' },
        { kind: 'literal', text: ' ' },
        { kind: 'intermediate', name: 'id' },
        { kind: 'literal', text: ' ' },
        { kind: 'env', name: 'E' },
        { kind: 'literal', text: ' ' },
        { kind: 'internal-error-text' },
      ],
    };
    expect(expandTemplate(tpl, scope({}, { intermediate: new Map([['id', '42']]), env: { E: 'ev' }, internalErrorText: 'boom' }))).toBe('req-1 42 ev boom');
  });

  it('throws MissingValueError for an unbound parameter, an unproduced value or an unset variable', () => {
    expect(() => expandTemplate(t('${nope}', 'none'), scope())).toThrow(MissingValueError);
    const part = (p: TemplatePart): Template => ({ source: '', escaping: 'none', parts: [p] });
    expect(() => expandTemplate(part({ kind: 'intermediate', name: 'v' }), scope())).toThrow(MissingValueError);
    expect(() => expandTemplate(part({ kind: 'env', name: 'UNSET' }), scope())).toThrow(MissingValueError);
  });

  it('inserts a verbatim value (dry-run) without escaping it', () => {
    const out = expandTemplate(
      t('https://h/${id}/${q}', 'url'),
      scope({ q: 'a b' }, { verbatim: (p) => (p.kind === 'parameter' && p.name === 'id' ? '<from fetch>' : undefined) }),
    );
    expect(out).toBe('https://h/<from fetch>/a%20b');
  });
});

describe('escape functions (properties)', () => {
  it('escapeForm equals URLSearchParams serialisation for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        expect(escapeForm(s)).toBe(new URLSearchParams({ v: s }).toString().slice(2));
      }),
    );
  });

  it('escapeJsonString round-trips through JSON.parse for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(JSON.parse(`"${escapeJsonString(s)}"`)).toBe(s);
      }),
    );
  });

  it('escapeXml and escapeHtml leave no markup characters', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        for (const out of [escapeXml(s), escapeHtml(s)]) expect(out).not.toMatch(/[<>"']|&(?!(amp|lt|gt|quot|apos|#39);)/);
      }),
    );
  });
});
